#include "stream_ring.hpp"

#include <algorithm>

#include "metrale/error.hpp"
#include "metrale/w8a16_gemm_m16_stream.hpp"

namespace metrale {

std::uint32_t stream_ring_stages(std::string_view fn, std::uint32_t stage_bytes,
                                 std::uint32_t requested) {
  const std::uint32_t stages =
      requested != 0
          ? requested
          : std::clamp<std::uint32_t>(W8A16_GEMM_M16_STREAM_RING_BYTES / stage_bytes, 2, 4);
  ensure(stages >= 2 && stages <= 12, "{}: stages={} outside 2..=12", fn, stages);
  // Hopper's opt-in 227 KiB per block less 1 KiB for the kernels' static barriers and
  // scales; the launch would fail past it anyway, less clearly.
  constexpr std::uint64_t kMaxSharedBytes = 232448 - 1024;
  const std::uint64_t needed = stream_ring_shared_bytes(stages, stage_bytes);
  ensure(needed <= kMaxSharedBytes,
         "{}: a ring of {} stages of {} bytes needs {} bytes of shared memory, over the {} "
         "a block can have beside its static shared memory",
         fn, stages, stage_bytes, needed, kMaxSharedBytes);
  return stages;
}

StreamTensorMaps stream_tensor_maps(std::string_view fn, const GpuBackend& gpu,
                                    DevicePtr input, DevicePtr weight, std::uint32_t m,
                                    std::uint32_t n, std::uint32_t k,
                                    std::uint32_t a_row_stride, std::uint32_t rows) {
  // The last block's coordinates, K - 128 and the last tile's first row (under N), must be
  // at most 2^31 - 1.
  ensure(k <= (1u << 31), "{}: K={} over 2^31, past the tensor copies' signed 32-bit "
         "coordinates", fn, k);
  ensure(n <= (1u << 31), "{}: N={} over 2^31, past the tensor copies' signed 32-bit "
         "coordinates", fn, n);
  return {gpu.tensor_map_2d({weight, 1, k, n, k, 128, rows}),
          gpu.tensor_map_2d({input, 2, k, m, std::uint64_t{a_row_stride} * 2, 128, m})};
}

}  // namespace metrale
