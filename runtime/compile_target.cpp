#include "metrale/compile_target.hpp"

#include <charconv>
#include <optional>
#include <vector>

#include <fmt/ranges.h>

#include "metrale/error.hpp"
#include "metrale/log.hpp"
#include "metrale/nvrtc_compiler.hpp"

namespace metrale {
std::optional<int> sm_number(std::string_view target) {
  if (!target.starts_with("sm_")) return std::nullopt;
  target.remove_prefix(3);
  int value = 0;
  auto [ptr, ec] = std::from_chars(target.data(), target.data() + target.size(), value);
  if (ec != std::errc() || ptr != target.data() + target.size()) return std::nullopt;
  return value;
}

CompileTarget choose_compile_target(std::string_view device_target,
                                    std::span<const std::string> supported) {
  const std::optional<int> wanted = sm_number(device_target);
  if (!wanted) return {std::string(device_target), false};
  // PTX of a virtual architecture runs on every GPU at least that new, so the newest
  // supported one not newer than the device is the best fallback.
  std::optional<int> best;
  for (const std::string& s : supported) {
    const std::optional<int> n = sm_number(s);
    if (!n || *n > *wanted) continue;
    if (*n == *wanted) return {std::string(device_target), false};
    if (!best || *n > *best) best = n;
  }
  if (!best) {
    fail("this NVRTC supports no target as old as {} (supported: {}); use an older CUDA "
         "toolkit's NVRTC for this GPU",
         device_target, fmt::join(supported, ", "));
  }
  return {"compute_" + std::to_string(*best), true};
}

CompileTarget choose_compile_target(std::string_view device_target) {
  const std::vector<std::string> supported = nvrtc_supported_targets();
  CompileTarget chosen = choose_compile_target(device_target, supported);
  if (chosen.ptx_fallback) {
    logger()->warn(
        "NVRTC {} cannot emit a CUBIN for {}; compiling PTX for {} instead, which the "
        "driver JIT-compiles when the module loads. Upgrade the CUDA toolkit (NVRTC) for "
        "native code.",
        nvrtc_version(), device_target, chosen.target);
  }
  return chosen;
}

std::string virtual_target(std::string_view target) {
  if (target.starts_with("compute_")) return std::string(target);
  return "compute_" + normalize_target(target).substr(3);
}

}  // namespace metrale
