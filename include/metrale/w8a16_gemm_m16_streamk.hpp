// Stream-K entry of the M16 tensor-core GEMM (kernel_sources/w8a16_gemm_m16_streamk.cu):
// a persistent grid of `ctas` CTAs splits the layer's units (128 weight rows x 128 K)
// evenly, so every SM streams the same number of weight bytes whatever the tile count.
// Tiles split between CTAs are added up through the caller's workspace in a fixed order:
// deterministic (bit-identical from run to run on one device and grid), no atomics, and
// held to the same accuracy budget as the seed's entries. The CTA that adds a split tile
// waits for the tile's other CTAs to publish their partials, which they do before they
// wait on anything: the launch needs two of its CTAs resident at a time, started in index
// order as the hardware starts them, not the whole grid.
//
// Grid: (ctas, 1, 1)  Block: (288, 1, 1); dynamic shared memory 128 + stages * (16384 +
// m * 256) bytes. Same operands and guards as w8a16_gemm_m16_strided, plus the workspace.
#pragma once

#include <cstdint>

#include "metrale/gpu_backend.hpp"
#include "metrale/m16_launch_options.hpp"

namespace metrale {

// Device memory the launcher may use between its launches: at least
// w8a16_gemm_m16_streamk_workspace_bytes(n, ctas) bytes, 16-byte aligned, zeroed once
// before the first launch (cuMemsetD8). Every launch that completes leaves it zeroed, so
// it is reused without clearing, by any shape and grid that fits it; launches that may
// run at the same time (other streams) need workspaces of their own.
struct StreamKWorkspace {
  DevicePtr ptr;
  std::uint64_t bytes = 0;
};

std::uint64_t w8a16_gemm_m16_streamk_workspace_bytes(std::uint32_t n, std::uint32_t ctas);

// The CTAs a launch asked for `ctas` runs on n x k: at most one per unit (128 weight rows x
// 128 K), so a grid larger than the layer's units is cut to them.
std::uint32_t w8a16_gemm_m16_streamk_grid_ctas(std::uint32_t n, std::uint32_t k,
                                               std::uint32_t ctas);

// `ctas`: the persistent grid, e.g. 1 or 2 x the SM count (a CTA per 128 x 128 unit at most:
// a larger value is cut to the unit count). `stages`: ring stages, 0 = as many as
// W8A16_GEMM_M16_STREAM_RING_BYTES holds, at most 4; 2..12 where the ring fits in a
// block's shared memory.
void w8a16_gemm_m16_streamk(const GpuBackend& gpu, KernelHandle kernel, DevicePtr input,
                            DevicePtr weight, DevicePtr block_scale, DevicePtr output,
                            std::uint32_t m, std::uint32_t n, std::uint32_t k,
                            std::uint32_t a_row_stride, std::uint32_t c_row_stride,
                            StreamKWorkspace workspace, std::uint32_t ctas, StreamHandle stream,
                            M16LaunchOptions options = {}, std::uint32_t stages = 0);

}  // namespace metrale
