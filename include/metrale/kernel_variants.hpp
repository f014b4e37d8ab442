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
};

// Every module the library ships.
std::span<const KernelVariant> kernel_variants();

// The variant whose entries include `entry`; throws Error naming the known entries.
const KernelVariant& variant_for_entry(std::string_view entry);

// The variant called `name`; throws Error naming the known variants.
const KernelVariant& variant_named(std::string_view name);

}  // namespace metrale
