#include "metrale/w8a16_gemm_m16_stream.hpp"

#include <array>

#include "launch_guards.hpp"
#include "launch_operands.hpp"
#include "metrale/error.hpp"
#include "metrale/kernel_launch.hpp"
#include "stream_ring.hpp"

namespace metrale {

std::uint32_t stream_tile_rows(std::uint32_t n) {
  if (n >= 4096) return 128;
  if (n >= 1024) return 64;
  return 32;
}

std::uint32_t stream_stage_bytes(std::uint32_t m, std::uint32_t rows) {
  return W8A16_GEMM_M16_STREAM_STAGE_WEIGHT_BYTES + (128 / rows) * m * 256;
}

void w8a16_gemm_m16_stream(const GpuBackend& gpu, KernelHandle kernel, DevicePtr input,
                           DevicePtr weight, DevicePtr block_scale, DevicePtr output,
                           std::uint32_t m, std::uint32_t n, std::uint32_t k,
                           std::uint32_t a_row_stride, std::uint32_t c_row_stride,
                           std::uint32_t split, StreamHandle stream,
                           M16LaunchOptions options, StreamTuning tuning) {
  constexpr std::string_view fn = "w8a16_gemm_m16_stream";
  guards::check_m_and_k(fn, m, k);
  guards::check_strides(fn, n, k, a_row_stride, c_row_stride);
  guards::check_split(fn, split, k);
  const std::uint32_t rows = tuning.rows == 0 ? stream_tile_rows(n) : tuning.rows;
  ensure(rows == 32 || rows == 64 || rows == 128, "{}: tile rows={} not one of 32, 64, 128",
         fn, rows);
  const std::uint32_t stage_bytes = stream_stage_bytes(m, rows);
  const std::uint32_t stages = stream_ring_stages(fn, stage_bytes, tuning.stages);
  guards::check_operands(fn, input, weight, block_scale, output,
                         {m, n, k, a_row_stride, c_row_stride});
  static constexpr std::array<std::string_view, 1> kEntry = {"w8a16_gemm_m16_stream"};
  guards::check_kernel(fn, kernel, kEntry);
  const StreamTensorMaps maps =
      stream_tensor_maps(fn, gpu, input, weight, m, n, k, a_row_stride, rows);
  KernelLaunch launch(gpu, guards::build_for_tokens(fn, kernel, m));
  launch.grid({div_ceil(n, rows), split, 1})
      .block({256, 1, 1})
      .shared_bytes(stream_ring_shared_bytes(stages, stage_bytes));
  split_over_cluster(launch, split, options);
  push_operands(launch, input, weight, block_scale, output, m, n, k)
      .arg_u32(a_row_stride)
      .arg_u32(c_row_stride)
      .arg_u32(rows)
      .arg_u32(stream_ring_prefetch_stages(stages, options.programmatic_dependent))
      .arg_bytes(&maps.weights, sizeof(maps.weights))
      .arg_bytes(&maps.activations, sizeof(maps.activations))
      .launch(stream);
}

}  // namespace metrale
