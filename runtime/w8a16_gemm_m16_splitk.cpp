#include "metrale/w8a16_gemm_m16_splitk.hpp"

#include <algorithm>
#include <optional>

#include "launch_guards.hpp"
#include "launch_operands.hpp"
#include "m16_plan_chunks.hpp"
#include "metrale/error.hpp"
#include "metrale/kernel_launch.hpp"
#include "metrale/w8a16_gemm_m16.hpp"
#include "metrale/w8a16_gemm_m16_skinny.hpp"

namespace metrale {

void w8a16_gemm_m16_splitk(const GpuBackend& gpu, KernelHandle kernel, DevicePtr input,
                           DevicePtr weight, DevicePtr block_scale, DevicePtr output,
                           std::uint32_t m, std::uint32_t n, std::uint32_t k,
                           std::uint32_t a_row_stride, std::uint32_t c_row_stride,
                           std::uint32_t split, StreamHandle stream,
                           M16LaunchOptions options) {
  constexpr std::string_view fn = "w8a16_gemm_m16_splitk";
  guards::check_m_and_k(fn, m, k);
  guards::check_strides(fn, n, k, a_row_stride, c_row_stride);
  guards::check_split(fn, split, k);
  guards::check_operands(fn, input, weight, block_scale, output,
                         {m, n, k, a_row_stride, c_row_stride});
  guards::check_kernel(fn, kernel, guards::kStridedKernelEntries);
  KernelLaunch launch(gpu, guards::build_for_tokens(fn, kernel, m));
  launch.grid({div_ceil(n, W8A16_GEMM_M16_N_TILE), split, 1}).block({128, 1, 1});
  split_over_cluster(launch, split, options);
  push_operands(launch, input, weight, block_scale, output, m, n, k)
      .arg_u32(a_row_stride)
      .arg_u32(c_row_stride)
      .launch(stream);
}

}  // namespace metrale
