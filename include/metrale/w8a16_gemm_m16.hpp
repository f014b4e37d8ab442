// Launchers for the tensor-core W8A16 decode GEMM with a 16-row M tile
// (kernel_sources/w8a16_gemm_m16.cu; entries w8a16_gemm_m16, w8a16_gemm_m16_n64,
// w8a16_gemm_m16_strided).
//
// input [m, k] BF16 row-major, weight [N, K] FP8 E4M3 row-major, block_scale
// [ceil(N/128), K/128] FP32, output [m, n] BF16. The 128-K block scale is folded once
// per block onto an FP32 outer accumulator. The tensor cores reduce in their own order,
// so results are not bit-identical to the scalar w8a16_gemv_batch16; the contract is
// within_m16_tc_budget (oracle.hpp).
//
// Grid: (ceil(N/N_TILE), 1, 1)  Block: (128, 1, 1).
// Every guard failure throws metrale::Error and launches nothing.
#pragma once

#include <cstdint>

#include "metrale/gpu_backend.hpp"

namespace metrale {

// N columns one CTA owns in the default instantiation; the kernel's M16_N_TILE must
// equal it (checked when the module loads).
inline constexpr std::uint32_t W8A16_GEMM_M16_N_TILE = 32;

// The wide instantiation's N tile (w8a16_gemm_m16_n64, kernel M16_N_TILE_WIDE),
// selected for the dense FFN by METRALE_FFN_M16_TC_NTILE=64.
inline constexpr std::uint32_t W8A16_GEMM_M16_N_TILE_WIDE = 64;

// The shared signature of w8a16_gemm_m16 and w8a16_gemm_m16_n64.
using ContiguousM16Gemm = void (*)(const GpuBackend& gpu, KernelHandle kernel,
                                   DevicePtr input, DevicePtr weight,
                                   DevicePtr block_scale, DevicePtr output, std::uint32_t m,
                                   std::uint32_t n, std::uint32_t k, StreamHandle stream);

// Contiguous input [m, k] and output [m, n]. Errors for m outside 1..=16, K not a
// multiple of 128, n == 0, and pointers the kernel reads in 16-byte pieces (input,
// weight) that are not 16-byte aligned.
void w8a16_gemm_m16(const GpuBackend& gpu, KernelHandle kernel, DevicePtr input,
                    DevicePtr weight, DevicePtr block_scale, DevicePtr output,
                    std::uint32_t m, std::uint32_t n, std::uint32_t k, StreamHandle stream);

// The N_TILE=64 instantiation: same arguments and guards, ceil(N/64) CTAs.
void w8a16_gemm_m16_n64(const GpuBackend& gpu, KernelHandle kernel, DevicePtr input,
                        DevicePtr weight, DevicePtr block_scale, DevicePtr output,
                        std::uint32_t m, std::uint32_t n, std::uint32_t k,
                        StreamHandle stream);

// Strided rows: a_row_stride / c_row_stride are the A and C row pitches in elements.
// a_row_stride must be a multiple of 8 (16-byte activation rows).
void w8a16_gemm_m16_strided(const GpuBackend& gpu, KernelHandle kernel, DevicePtr input,
                            DevicePtr weight, DevicePtr block_scale, DevicePtr output,
                            std::uint32_t m, std::uint32_t n, std::uint32_t k,
                            std::uint32_t a_row_stride, std::uint32_t c_row_stride,
                            StreamHandle stream);

}  // namespace metrale
