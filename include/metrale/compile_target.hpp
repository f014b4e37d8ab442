// Which target NVRTC compiles for on a given device: the device's own sm_XY (a CUBIN)
// when this NVRTC can emit it, otherwise PTX for the newest virtual architecture it
// knows, which the driver JIT-compiles for the newer GPU.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace metrale {

// 90 for "sm_90"; nullopt for anything not of the form sm_XY.
std::optional<int> sm_number(std::string_view target);

struct CompileTarget {
  std::string target;         // "sm_90" or, on fallback, e.g. "compute_120"
  bool ptx_fallback = false;  // the device's sm_XY is newer than NVRTC supports
};

// `supported` lists "sm_XY" targets (nvrtc_supported_targets()). A device target that is
// not of the form sm_XY is returned unchanged (it is not NVRTC's to judge). Throws Error
// when `supported` is empty.
CompileTarget choose_compile_target(std::string_view device_target,
                                    std::span<const std::string> supported);

// The same against the linked NVRTC; logs a warning on fallback.
CompileTarget choose_compile_target(std::string_view device_target);

// "sm_90" -> "compute_90"; throws Error for anything normalize_target refuses.
std::string virtual_target(std::string_view target);

}  // namespace metrale
