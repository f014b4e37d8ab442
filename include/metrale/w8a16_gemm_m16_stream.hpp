// Streaming entry of the M16 tensor-core GEMM (kernel_sources/w8a16_gemm_m16_stream.cu):
// each tile of `rows` weight rows (32, 64 or 128) is computed by a thread-block cluster
// of `split` CTAs (1..8), CTA r reducing the r-th share of the 128-K blocks with its
// weights streamed through a shared-memory ring of `stages` 16 KiB stages (tensor copies
// on sm_90, cp.async before); the partial tiles are added in rank order through
// distributed shared memory. Deterministic (bit-identical from run to run), no atomics,
// and held to the same accuracy budget as the seed's entries. It beats the register-fed
// entries where 1.5 to 2 of its CTAs fill each SM (plan_m16_gemm).
//
// Grid: (ceil(N/rows), split, 1)  Block: (256, 1, 1)  Cluster: (1, split, 1) when
// split > 1; dynamic shared memory 128 + stages * (16384 + (128/rows) * m * 256) bytes.
// Same operands and guards as w8a16_gemm_m16_strided, plus 1 <= split <= 8 and
// split <= K/128.
#pragma once

#include <cstdint>

#include "metrale/gpu_backend.hpp"
#include "metrale/m16_launch_options.hpp"

namespace metrale {

// Weight bytes of one stage of the ring (checked against the loaded module).
inline constexpr std::uint32_t W8A16_GEMM_M16_STREAM_STAGE_WEIGHT_BYTES = 16384;
// Shared memory the default ring may take per CTA: two CTAs fit an SM from sm_80 on.
inline constexpr std::uint32_t W8A16_GEMM_M16_STREAM_RING_BYTES = 96 * 1024;

// Tile rows and ring stages; 0 = the launcher's choice (stream_tile_rows, and as many
// stages, at most 4, as W8A16_GEMM_M16_STREAM_RING_BYTES holds; a request may ask for up
// to 12 where the ring fits in a block's shared memory).
struct StreamTuning {
  std::uint32_t rows = 0;
  std::uint32_t stages = 0;
};

// The tile rows the launcher picks for N: 128 from N = 4096, 64 from N = 1024, else 32,
// so that skinny layers still get enough tiles to spread over the SMs.
std::uint32_t stream_tile_rows(std::uint32_t n);

// Bytes of one ring stage for m tokens and a tile of `rows` rows.
std::uint32_t stream_stage_bytes(std::uint32_t m, std::uint32_t rows);

void w8a16_gemm_m16_stream(const GpuBackend& gpu, KernelHandle kernel, DevicePtr input,
                           DevicePtr weight, DevicePtr block_scale, DevicePtr output,
                           std::uint32_t m, std::uint32_t n, std::uint32_t k,
                           std::uint32_t a_row_stride, std::uint32_t c_row_stride,
                           std::uint32_t split, StreamHandle stream,
                           M16LaunchOptions options = {}, StreamTuning tuning = {});

}  // namespace metrale
