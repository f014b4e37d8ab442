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
  friend bool operator==(const GlobalCheck&, const GlobalCheck&) = default;
  friend auto operator<=>(const GlobalCheck&, const GlobalCheck&) = default;
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
  // The one `__global__` every entry runs, when the entries differ only in how their
  // launchers launch it (the split-K entry is the strided kernel in a cluster): one
  // compile serves them all. Empty: each entry is the kernel of its own name.
  std::string kernel_symbol{};
};

// The NVRTC request that builds `variant` for `target`: its embedded source and its defines,
// no extra options. Every path that compiles or keys a variant takes it from here, so that
// `metrale compile`'s cache entries are the ones a process looks up.
CompileRequest compile_request(const KernelVariant& variant, std::string target,
                               bool ptxas_report = false);

// The kernel symbol in `variant`'s module that `entry` runs.
std::string_view kernel_symbol_of(const KernelVariant& variant, std::string_view entry);

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

// The modules of the variants named (all of them when `names` is empty), each once;
// every name is resolved first (variant_named), so an unknown one throws Error before
// anything is compiled.
std::vector<KernelVariant> module_builds_named(std::span<const std::string> names);

// The variant whose entries include `entry`; throws Error naming the known entries.
const KernelVariant& variant_for_entry(std::string_view entry);

// The variant called `name`, else the variant with an entry called `name` (so that
// warm-ups and `metrale compile --variant` also take entry names); throws Error naming
// the known variants.
const KernelVariant& variant_named(std::string_view name);

}  // namespace metrale
