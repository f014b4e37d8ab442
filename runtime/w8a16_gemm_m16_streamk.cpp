#include "metrale/w8a16_gemm_m16_streamk.hpp"

#include <algorithm>
#include <array>

#include "launch_guards.hpp"
#include "launch_operands.hpp"
#include "metrale/error.hpp"
#include "metrale/kernel_launch.hpp"
#include "metrale/w8a16_gemm_m16_stream.hpp"
#include "stream_ring.hpp"

namespace metrale {
namespace {

constexpr std::uint32_t kRows = 128;
// A CTA's slot of partials: 256 compute threads x 8 words of a tile's 128 rows x 16
// tokens, sized for 64-bit words (the kernel's tuning point STREAMK_PARTIAL_WORDS64); the
// shipped kernel's 32-bit words use the first half.
constexpr std::uint64_t kSlotBytes = 256 * 8 * 8;

}  // namespace

std::uint64_t w8a16_gemm_m16_streamk_workspace_bytes(std::uint32_t n, std::uint32_t ctas) {
  (void)n;  // one slot per CTA, whatever the layer's width
  return std::uint64_t{ctas} * kSlotBytes;
}

std::uint32_t w8a16_gemm_m16_streamk_grid_ctas(std::uint32_t n, std::uint32_t k,
                                               std::uint32_t ctas) {
  const std::uint64_t units = std::uint64_t{div_ceil(n, kRows)} * (k / 128);
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(ctas, units));
}

void w8a16_gemm_m16_streamk(const GpuBackend& gpu, KernelHandle kernel, DevicePtr input,
                            DevicePtr weight, DevicePtr block_scale, DevicePtr output,
                            std::uint32_t m, std::uint32_t n, std::uint32_t k,
                            std::uint32_t a_row_stride, std::uint32_t c_row_stride,
                            StreamKWorkspace workspace, std::uint32_t ctas, StreamHandle stream,
                            M16LaunchOptions options, std::uint32_t stages) {
  constexpr std::string_view fn = "w8a16_gemm_m16_streamk";
  guards::check_m_and_k(fn, m, k);
  guards::check_blocks(fn, k);
  guards::check_strides(fn, n, k, a_row_stride, c_row_stride);
  ensure(ctas >= 1, "{}: ctas={} must be at least 1", fn, ctas);
  const std::uint32_t grid = w8a16_gemm_m16_streamk_grid_ctas(n, k, ctas);
  const std::uint32_t stage_bytes = stream_stage_bytes(m, kRows);
  const std::uint32_t ring_stages = stream_ring_stages(fn, stage_bytes, stages);
  guards::check_operands(fn, input, weight, block_scale, output,
                         {m, n, k, a_row_stride, c_row_stride});
  static constexpr std::array<std::string_view, 1> kEntry = {"w8a16_gemm_m16_streamk"};
  guards::check_kernel(fn, kernel, kEntry);
  const std::uint64_t needed = w8a16_gemm_m16_streamk_workspace_bytes(n, grid);
  ensure(workspace.ptr.address != 0, "{}: workspace is null", fn);
  ensure(workspace.ptr.address % 16 == 0, "{}: workspace 0x{:x} is not 16-byte aligned", fn,
         workspace.ptr.address);
  ensure(workspace.bytes >= needed,
         "{}: workspace of {} bytes, N={} on {} CTAs needs {} "
         "(w8a16_gemm_m16_streamk_workspace_bytes)",
         fn, workspace.bytes, n, grid, needed);
  const StreamTensorMaps maps =
      stream_tensor_maps(fn, gpu, input, weight, m, n, k, a_row_stride, kRows);
  KernelLaunch launch(gpu, guards::build_for_tokens(fn, kernel, m));
  launch.grid({grid, 1, 1})
      .block({288, 1, 1})  // 8 compute warps and the producer warp
      .shared_bytes(stream_ring_shared_bytes(ring_stages, stage_bytes))
      .programmatic_dependent(options.programmatic_dependent);
  push_operands(launch, input, weight, block_scale, output, m, n, k)
      .arg_u32(a_row_stride)
      .arg_u32(c_row_stride)
      .arg_ptr(workspace.ptr)
      .arg_u32(stream_ring_prefetch_stages(ring_stages, options.programmatic_dependent))
      .arg_bytes(&maps.weights, sizeof(maps.weights))
      .arg_bytes(&maps.activations, sizeof(maps.activations))
      .launch(stream);
}

}  // namespace metrale
