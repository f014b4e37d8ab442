#include "metrale/w8a16_gemm_m16_rows8.hpp"

#include <string_view>

#include "launch_guards.hpp"
#include "launch_operands.hpp"
#include "metrale/error.hpp"
#include "metrale/kernel_launch.hpp"

namespace metrale {

void w8a16_gemm_m16_rows8(const GpuBackend& gpu, KernelHandle kernel, DevicePtr input,
                          DevicePtr weight, DevicePtr block_scale, DevicePtr output,
                          std::uint32_t m, std::uint32_t n, std::uint32_t k,
                          std::uint32_t a_row_stride, std::uint32_t c_row_stride,
                          std::uint32_t warps, StreamHandle stream, M16LaunchOptions options) {
  constexpr std::string_view fn = "w8a16_gemm_m16_rows8";
  const std::string_view name = kernel.name != nullptr ? kernel.name : "";
  const bool bulk = name == "w8a16_gemm_m16_rows8_bulk";
  ensure(name == fn || bulk, "{}: the handle is of '{}', not of {}", fn, name, fn);
  guards::check_m_and_k(fn, m, k);
  guards::check_strides(fn, n, k, a_row_stride, c_row_stride);
  ensure(warps >= 1 && warps <= W8A16_GEMM_M16_ROWS8_MAX_WARPS, "{}: warps={} outside 1..={}",
         fn, warps, W8A16_GEMM_M16_ROWS8_MAX_WARPS);
  guards::check_operands(fn, input, weight, block_scale, output, n);
  // The reduction buffer: a token row of 8 floats per token of the build and warp.
  const std::uint32_t tokens = m <= 8 ? 8 : 16;
  const std::uint32_t ctas = n / 8 + (n % 8 != 0 ? 1 : 0);  // div_ceil would wrap near 2^32
  KernelLaunch launch(gpu, guards::build_for_tokens(fn, kernel, m));
  launch.grid({ctas, 1, 1})
      .block({32 * warps, 1, 1})
      .shared_bytes(warps * tokens * 8 * 4 +
                    (bulk ? 8 * k + 8 * div_ceil(k / 128, warps) : 0))
      .programmatic_dependent(options.programmatic_dependent);
  push_operands(launch, input, weight, block_scale, output, m, n, k)
      .arg_u32(a_row_stride)
      .arg_u32(c_row_stride)
      .launch(stream);
}

}  // namespace metrale
