#include "metrale/w8a16_gemm_m16.hpp"

#include <array>
#include <string_view>

#include "launch_guards.hpp"
#include "launch_operands.hpp"
#include "metrale/kernel_launch.hpp"

namespace metrale {
namespace {

// The seed's grid and operands.
KernelLaunch& with_seed_grid(KernelLaunch& launch, std::uint32_t n_tile, DevicePtr input,
                             DevicePtr weight, DevicePtr block_scale, DevicePtr output,
                             std::uint32_t m, std::uint32_t n, std::uint32_t k) {
  launch.grid({div_ceil(n, n_tile), 1, 1}).block({128, 1, 1});
  return push_operands(launch, input, weight, block_scale, output, m, n, k);
}

// The launch both contiguous instantiations share. The 32-wide tile runs the strided
// kernel (`strided_kernel`), which also takes the pitches: k and n for contiguous rows.
void launch_contiguous(std::string_view fn, std::uint32_t n_tile, bool strided_kernel,
                       const GpuBackend& gpu, KernelHandle kernel, DevicePtr input,
                       DevicePtr weight, DevicePtr block_scale, DevicePtr output,
                       std::uint32_t m, std::uint32_t n, std::uint32_t k, StreamHandle stream) {
  guards::check_m_and_k(fn, m, k);
  guards::check_operands(fn, input, weight, block_scale, output, {m, n, k, k, n});
  static constexpr std::array<std::string_view, 1> kWide = {"w8a16_gemm_m16_n64"};
  if (strided_kernel) {
    guards::check_kernel(fn, kernel, guards::kStridedKernelEntries);
  } else {
    guards::check_kernel(fn, kernel, kWide);
  }
  KernelLaunch launch(gpu, guards::build_for_tokens(fn, kernel, m));
  with_seed_grid(launch, n_tile, input, weight, block_scale, output, m, n, k);
  if (strided_kernel) launch.arg_u32(k).arg_u32(n);
  launch.launch(stream);
}

}  // namespace

void w8a16_gemm_m16(const GpuBackend& gpu, KernelHandle kernel, DevicePtr input,
                    DevicePtr weight, DevicePtr block_scale, DevicePtr output, std::uint32_t m,
                    std::uint32_t n, std::uint32_t k, StreamHandle stream) {
  launch_contiguous("w8a16_gemm_m16", W8A16_GEMM_M16_N_TILE, true, gpu, kernel, input, weight,
                    block_scale, output, m, n, k, stream);
}

void w8a16_gemm_m16_n64(const GpuBackend& gpu, KernelHandle kernel, DevicePtr input,
                        DevicePtr weight, DevicePtr block_scale, DevicePtr output,
                        std::uint32_t m, std::uint32_t n, std::uint32_t k,
                        StreamHandle stream) {
  launch_contiguous("w8a16_gemm_m16_n64", W8A16_GEMM_M16_N_TILE_WIDE, false, gpu, kernel, input,
                    weight, block_scale, output, m, n, k, stream);
}

void w8a16_gemm_m16_strided(const GpuBackend& gpu, KernelHandle kernel, DevicePtr input,
                            DevicePtr weight, DevicePtr block_scale, DevicePtr output,
                            std::uint32_t m, std::uint32_t n, std::uint32_t k,
                            std::uint32_t a_row_stride, std::uint32_t c_row_stride,
                            StreamHandle stream) {
  constexpr std::string_view fn = "w8a16_gemm_m16_strided";
  guards::check_m_and_k(fn, m, k);
  guards::check_strides(fn, n, k, a_row_stride, c_row_stride);
  guards::check_operands(fn, input, weight, block_scale, output,
                         {m, n, k, a_row_stride, c_row_stride});
  guards::check_kernel(fn, kernel, guards::kStridedKernelEntries);
  KernelLaunch launch(gpu, guards::build_for_tokens(fn, kernel, m));
  with_seed_grid(launch, W8A16_GEMM_M16_N_TILE, input, weight, block_scale, output, m, n, k)
      .arg_u32(a_row_stride)
      .arg_u32(c_row_stride)
      .launch(stream);
}

}  // namespace metrale
