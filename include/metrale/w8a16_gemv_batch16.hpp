// The scalar FFMA reference path (kernel_sources/w8a16_gemv_batch16.cu): FP32
// sequential accumulation over each 128-K block, the block scale folded once per block
// with one FMA onto the FP32 outer accumulator, then one BF16 round. It is bit-identical
// to cpu_w8a16_gemv (host_reference.hpp) and is the oracle the tensor-core entries are
// held against.
#pragma once

#include <cstdint>

#include "metrale/gpu_backend.hpp"

namespace metrale {

// Threads per CTA of the scalar kernels; one thread owns one output column.
inline constexpr std::uint32_t W8A16_GEMV_BATCH16_THREADS = 128;

void w8a16_gemv_batch16(const GpuBackend& gpu, KernelHandle kernel, DevicePtr input,
                        DevicePtr weight, DevicePtr block_scale, DevicePtr output,
                        std::uint32_t m, std::uint32_t n, std::uint32_t k,
                        StreamHandle stream);

void w8a16_gemv_batch16_strided(const GpuBackend& gpu, KernelHandle kernel, DevicePtr input,
                                DevicePtr weight, DevicePtr block_scale, DevicePtr output,
                                std::uint32_t m, std::uint32_t n, std::uint32_t k,
                                std::uint32_t a_row_stride, std::uint32_t c_row_stride,
                                StreamHandle stream);

}  // namespace metrale
