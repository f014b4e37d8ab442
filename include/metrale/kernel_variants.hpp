// The modules the library builds from kernel_sources/: which source, which defines,
// which entries each carries and which compile-time constants are checked on load.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "metrale/nvrtc_compiler.hpp"

namespace metrale {

// A `__device__ unsigned` the module must hold with this value (e.g. its N tile),
// read back with cuModuleGetGlobal when the module loads.
struct GlobalCheck {
  std::string name;
  std::uint32_t expected;
};

struct KernelVariant {
  std::string name;    // module name, e.g. "w8a16_gemm_m16"
  std::string source;  // embedded file name
  std::vector<Define> defines;
  std::vector<std::string> entries;
  std::vector<GlobalCheck> checks;
  // Compiled as two modules (module_builds), one for m <= 8 and one for m in 9..16: each
  // compiles in about half the time, and start-up compiles them side by side. The
  // entries' handles carry both (KernelHandle::function_above8).
  bool token_split = false;
};

// Every variant the library ships.
std::span<const KernelVariant> kernel_variants();

// The modules `variant` compiles as: itself, or for a token-split variant `<name>.m8`
// (define TOKEN_GROUPS=1, m <= 8) and `<name>.m16` (TOKEN_GROUPS=2, m in 9..16), in that
// order, each with the variant's defines.
std::vector<KernelVariant> module_builds(const KernelVariant& variant);

// module_builds of a variant of kernel_variants(), computed once: what the launch path
// resolves without allocating. Throws Error for any other variant.
std::span<const KernelVariant> shipped_module_builds(const KernelVariant& shipped);

// Every module the library ships: module_builds of every variant.
std::vector<KernelVariant> all_module_builds();

// The modules of the variants named (all of them when `names` is empty); every name is
// resolved first, so an unknown one throws Error before anything is compiled.
std::vector<KernelVariant> module_builds_named(std::span<const std::string> names);

// The variant whose entries include `entry`; throws Error naming the known entries.
const KernelVariant& variant_for_entry(std::string_view entry);

// The variant called `name`; throws Error naming the known variants.
const KernelVariant& variant_named(std::string_view name);

}  // namespace metrale
