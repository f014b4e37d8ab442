// The device's read-only streaming ceiling, measured in the same run as the kernels so
// "% of ceiling" compares numbers taken under the same clocks and the same driver.
#pragma once

#include <cstdint>
#include <string_view>

#include "metrale/bench/graph_timer.hpp"
#include "metrale/cuda_backend.hpp"

namespace metrale::bench {

struct Ceiling {
  double gbps = 0.0;        // from the median replay: the figure every % refers to
  double gbps_best = 0.0;   // from the fastest replay
  double gbps_worst = 0.0;  // from the slowest replay
  std::uint64_t bytes_per_launch = 0;
  std::uint32_t grid = 0;
  std::uint32_t block = 0;
  double compile_ms = 0.0;
  Timing timing;
};

Ceiling measure_read_ceiling(const CudaBackend& gpu, const Stream& stream,
                             std::uint32_t replays);

// read_ceiling's kernel and grid on `bytes` per launch instead of 1 GiB: R distinct copies
// (R x bytes >= min_bytes, so L2 never holds the next launch's bytes), one launch per
// copy in a graph, as the GEMM entries are timed. What a launch of pure reading costs at
// a layer's size, ramp, tail and launch gap included.
Ceiling measure_size_ceiling(const CudaBackend& gpu, const Stream& stream, std::uint32_t replays,
                             std::uint64_t bytes, std::uint64_t min_bytes);

// Graphs of 64 empty kernels, timed as the entries are: the time per launch is what a
// graph spends between two dependent kernels that do nothing, the part of every launch
// no kernel can remove (PDL aside). One module serves the three grids.
struct GraphGaps {
  Timing one_cta;   // one CTA of 32 threads
  Timing full;      // 2 CTAs x 256 threads per SM
  Timing clusters;  // 144 CTAs x 128 threads in clusters of (1, 8): kv_a's split-K grid
};

GraphGaps measure_graph_gaps(const CudaBackend& gpu, const Stream& stream, std::uint32_t replays);

// The read ceiling of the streaming kernels' weight access pattern on one layer (see
// read_pattern.cu): n rows x k bytes read as 128-row x `chunk`-byte units by
// `ctas_per_sm` CTAs per SM, over enough copies of the layer that L2 never holds the
// next launch's bytes. chunk = kPackedChunk reads chunk 128's units from the packed
// layout (each unit's 16 KiB contiguous).
inline constexpr std::uint32_t kPackedChunk = 16384;

struct PatternCeiling {
  std::uint32_t n = 0, k = 0, chunk = 0, ctas = 0;
  double gbps = 0.0;  // from the median replay
  Timing timing;
};

PatternCeiling measure_pattern_ceiling(const CudaBackend& gpu, const Stream& stream,
                                       std::uint32_t replays, std::uint32_t n, std::uint32_t k,
                                       std::uint32_t chunk, std::uint32_t ctas_per_sm);

// The read ceiling of a ring of tensor copies over one layer (see read_pattern_tma.cu):
// units of box_rows x box_bytes, tile-major, split evenly over `ctas_per_sm` CTAs per SM,
// each CTA keeping `stages` boxes in flight; stream-K's ring copies 128 x 128 boxes. With
// `claims_per_cta` > 0 the units are split into that many ranges per CTA, claimed by the
// CTAs as they go instead of handed out by index.
struct TmaBox {
  std::uint32_t rows = 0, bytes = 0, stages = 0;
};

// "RxBxS" (rows x bytes x stages), checked: rows 8..256, bytes a power of two in 16..512,
// stages 1..12.
TmaBox parse_tma_box(std::string_view text);

struct TmaPatternCeiling {
  std::uint32_t n = 0, k = 0, ctas = 0, claims_per_cta = 0;
  TmaBox box;
  double gbps = 0.0;  // from the median replay
  Timing timing;
};

TmaPatternCeiling measure_tma_pattern_ceiling(const CudaBackend& gpu, const Stream& stream,
                                              std::uint32_t replays, std::uint32_t n,
                                              std::uint32_t k, TmaBox box,
                                              std::uint32_t ctas_per_sm,
                                              std::uint32_t claims_per_cta);

// GB/s (1e9 bytes per second) for `bytes` read in `us` microseconds.
inline double gbps(std::uint64_t bytes, double us) {
  return us > 0.0 ? static_cast<double>(bytes) / us / 1e3 : 0.0;
}

}  // namespace metrale::bench
