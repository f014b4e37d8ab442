#include "metrale/w8a16_gemv_batch16.hpp"

#include <array>
#include <string_view>

#include "launch_guards.hpp"
#include "launch_operands.hpp"
#include "metrale/kernel_launch.hpp"

namespace metrale {
namespace {

// Either entry's handle runs the one strided kernel; another kernel takes other arguments.
constexpr std::array<std::string_view, 2> kGemvEntries = {"w8a16_gemv_batch16",
                                                          "w8a16_gemv_batch16_strided"};

// Both entries run the strided kernel, after their own guards.
void launch_strided_kernel(const GpuBackend& gpu, KernelHandle kernel, DevicePtr input,
                           DevicePtr weight, DevicePtr block_scale, DevicePtr output,
                           std::uint32_t m, std::uint32_t n, std::uint32_t k,
                           std::uint32_t a_row_stride, std::uint32_t c_row_stride,
                           StreamHandle stream) {
  KernelLaunch launch(gpu, kernel);
  launch.grid({div_ceil(n, W8A16_GEMV_BATCH16_THREADS), 1, 1})
      .block({W8A16_GEMV_BATCH16_THREADS, 1, 1});
  push_operands(launch, input, weight, block_scale, output, m, n, k)
      .arg_u32(a_row_stride)
      .arg_u32(c_row_stride)
      .launch(stream);
}

}  // namespace

void w8a16_gemv_batch16(const GpuBackend& gpu, KernelHandle kernel, DevicePtr input,
                        DevicePtr weight, DevicePtr block_scale, DevicePtr output,
                        std::uint32_t m, std::uint32_t n, std::uint32_t k,
                        StreamHandle stream) {
  constexpr std::string_view fn = "w8a16_gemv_batch16";
  guards::check_m_and_k(fn, m, k);
  guards::check_operands(fn, input, weight, block_scale, output, {m, n, k, k, n});
  guards::check_kernel(fn, kernel, kGemvEntries);
  // Contiguous rows: the pitches are k and n.
  launch_strided_kernel(gpu, kernel, input, weight, block_scale, output, m, n, k, k, n, stream);
}

void w8a16_gemv_batch16_strided(const GpuBackend& gpu, KernelHandle kernel, DevicePtr input,
                                DevicePtr weight, DevicePtr block_scale, DevicePtr output,
                                std::uint32_t m, std::uint32_t n, std::uint32_t k,
                                std::uint32_t a_row_stride, std::uint32_t c_row_stride,
                                StreamHandle stream) {
  constexpr std::string_view fn = "w8a16_gemv_batch16_strided";
  guards::check_m_and_k(fn, m, k);
  guards::check_strides(fn, n, k, a_row_stride, c_row_stride);
  guards::check_operands(fn, input, weight, block_scale, output,
                         {m, n, k, a_row_stride, c_row_stride});
  guards::check_kernel(fn, kernel, kGemvEntries);
  launch_strided_kernel(gpu, kernel, input, weight, block_scale, output, m, n, k, a_row_stride,
                        c_row_stride, stream);
}

}  // namespace metrale
