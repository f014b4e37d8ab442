// What the two launchers of the streaming ring (w8a16_gemm_m16_stream and
// w8a16_gemm_m16_streamk) set up alike: how many stages the ring gets, and the tensor
// maps its copies read.
#pragma once

#include <cstdint>
#include <string_view>

#include "metrale/gpu_backend.hpp"

namespace metrale {

// `requested` stages (2..8), or with 0 as many as W8A16_GEMM_M16_STREAM_RING_BYTES holds,
// between 2 and 4; throws Error naming `fn` when a requested count is out of range.
std::uint32_t stream_ring_stages(std::string_view fn, std::uint32_t stage_bytes,
                                 std::uint32_t requested);

// The weights (N rows of K bytes, boxes of 128 bytes x `rows` rows) and the activations
// (m rows of K BF16 at pitch a_row_stride, boxes of 128 x m).
struct StreamTensorMaps {
  TensorMapBytes weights;
  TensorMapBytes activations;
};
StreamTensorMaps stream_tensor_maps(const GpuBackend& gpu, DevicePtr input, DevicePtr weight,
                                    std::uint32_t m, std::uint32_t n, std::uint32_t k,
                                    std::uint32_t a_row_stride, std::uint32_t rows);

}  // namespace metrale
