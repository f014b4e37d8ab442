// Split-K streaming entry of the M16 tensor-core GEMM (kernel_sources/
// w8a16_gemm_m16_splitk.cu): each tile of `rows` weight rows (32, 64 or 128) is computed
// by a thread-block cluster of `split` CTAs, CTA r reducing the r-th share of the 128-K
// blocks with its weights streamed through a shared-memory ring of `stages` 16 KiB
// stages (tensor copies on sm_90, cp.async before); the partial tiles are added in rank
// order through distributed shared memory. Deterministic (bit-identical from run to
// run), no atomics, and held to the same accuracy budget as the seed's entries.
//
// Grid: (ceil(N/rows), split, 1)  Block: (256, 1, 1)  Cluster: (1, split, 1) when
// split > 1; dynamic shared memory 128 + stages * (16384 + (128/rows) * m * 256) bytes.
// Same operands and guards as w8a16_gemm_m16_strided, plus 1 <= split <= 8 and
// split <= K/128.
#pragma once

#include <cstdint>
#include <string_view>

#include "metrale/gpu_backend.hpp"

namespace metrale {

// The largest portable cluster: the most CTAs one tile is split across.
inline constexpr std::uint32_t W8A16_GEMM_M16_SPLITK_MAX = 8;
// Weight bytes of one stage of the ring (checked against the loaded module).
inline constexpr std::uint32_t W8A16_GEMM_M16_SPLITK_STAGE_WEIGHT_BYTES = 16384;
// Shared memory the default ring may take per CTA: two CTAs fit an SM from sm_80 on.
inline constexpr std::uint32_t W8A16_GEMM_M16_SPLITK_RING_BYTES = 96 * 1024;

// Tile rows and ring stages; 0 = the launcher's choice (splitk_tile_rows, and as many
// stages, at most 4, as W8A16_GEMM_M16_SPLITK_RING_BYTES holds).
struct SplitkTuning {
  std::uint32_t rows = 0;
  std::uint32_t stages = 0;
};

// The tile rows the launcher picks for N: 128 from N = 4096, 64 from N = 1024, else 32,
// so that skinny layers still get enough tiles to spread over the SMs.
std::uint32_t splitk_tile_rows(std::uint32_t n);

// Bytes of one ring stage for m tokens and a tile of `rows` rows.
std::uint32_t splitk_stage_bytes(std::uint32_t m, std::uint32_t rows);

// Opt-in launch behaviour of the split-K launcher.
struct M16LaunchOptions {
  // Programmatic dependent launch (sm_90): the kernel may start while the preceding
  // kernel of the stream still runs, loading its first weights and scales, and waits for
  // that kernel only before reading the activations and writing the output. The caller
  // promises that the preceding kernel does not write this launch's weights or scales.
  bool programmatic_dependent = false;
};

void w8a16_gemm_m16_splitk(const GpuBackend& gpu, KernelHandle kernel, DevicePtr input,
                           DevicePtr weight, DevicePtr block_scale, DevicePtr output,
                           std::uint32_t m, std::uint32_t n, std::uint32_t k,
                           std::uint32_t a_row_stride, std::uint32_t c_row_stride,
                           std::uint32_t split, StreamHandle stream,
                           M16LaunchOptions options = {}, SplitkTuning tuning = {});

// Which entry and split to run for a shape on a device with `sm_count` SMs: above 8
// tokens the seed's w8a16_gemm_m16_n64 where its 64-wide tiles fill the device, else the
// seed's w8a16_gemm_m16 when its tiles do, else w8a16_gemm_m16_splitk with the smallest
// power-of-two split that does (for callers that ask for the automatic
// choice, e.g. attention projections; the dense FFN keeps METRALE_FFN_M16_TC_NTILE).
struct M16Plan {
  std::string_view entry;  // "w8a16_gemm_m16", "w8a16_gemm_m16_n64" or "w8a16_gemm_m16_splitk"
  std::uint32_t split;     // 1 for w8a16_gemm_m16
};
M16Plan plan_m16_gemm(std::uint32_t m, std::uint32_t n, std::uint32_t k,
                      std::uint32_t sm_count);

}  // namespace metrale
