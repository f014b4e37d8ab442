// The kernel sources embedded at build time (kernel_sources/*.cu and *.cuh).
#pragma once

#include <span>
#include <string_view>

namespace metrale {

struct EmbeddedSource {
  std::string_view name;  // file name, e.g. "w8a16_gemm_m16.cu"
  std::string_view text;
};

std::span<const EmbeddedSource> embedded_sources();

// Throws Error naming the known sources when `name` is not embedded.
std::string_view embedded_source(std::string_view name);

}  // namespace metrale
