// What the two launchers of the streaming ring (w8a16_gemm_m16_stream and
// w8a16_gemm_m16_streamk) set up alike: how many stages the ring gets, and the tensor
// maps its copies read.
#pragma once

#include <cstdint>
#include <string_view>

#include "metrale/gpu_backend.hpp"

namespace metrale {

// `requested` stages (2..12), or with 0 as many as W8A16_GEMM_M16_STREAM_RING_BYTES holds,
// between 2 and 4; throws Error naming `fn` when a requested count is out of range or its
// ring does not fit in a block's shared memory.
std::uint32_t stream_ring_stages(std::string_view fn, std::uint32_t stage_bytes,
                                 std::uint32_t requested);

// The dynamic shared memory of a ring: its stages and the 128 bytes of slack the kernels
// use to align it for the tensor copies.
inline std::uint32_t stream_ring_shared_bytes(std::uint32_t stages, std::uint32_t stage_bytes) {
  return 128 + stages * stage_bytes;
}

// The weight stages the kernels issue ahead of the wait for the preceding grid
// (issue_first_stages in m16_stream_pipeline.cuh): the whole ring where that wait may be
// long, under a programmatic dependent launch, else none, so that the first stage's
// activations do not queue behind the later stages' weights (docs/performance.md, items
// 101 and 102).
inline std::uint32_t stream_ring_prefetch_stages(std::uint32_t stages,
                                                 bool programmatic_dependent) {
  return programmatic_dependent ? stages : 0;
}

// The weights (N rows of K bytes, boxes of 128 bytes x `rows` rows) and the activations
// (m rows of K BF16 at pitch a_row_stride, boxes of 128 x m). The copies' coordinates are
// signed 32-bit, and a box past 2^31 - 1 would read zeros: a K over 2^31 throws Error
// naming `fn`.
struct StreamTensorMaps {
  TensorMapBytes weights;
  TensorMapBytes activations;
};
StreamTensorMaps stream_tensor_maps(std::string_view fn, const GpuBackend& gpu,
                                    DevicePtr input, DevicePtr weight, std::uint32_t m,
                                    std::uint32_t n, std::uint32_t k,
                                    std::uint32_t a_row_stride, std::uint32_t rows);

}  // namespace metrale
