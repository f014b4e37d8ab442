// The 8-row entry of the M16 tensor-core GEMM (kernel_sources/w8a16_gemm_m16_rows8.cu), for
// small layers (DeepSeek-V3 kv_a, q_a): a CTA of `warps` warps owns 8 weight rows and all
// of K, each warp its share of K's 128-K blocks with two (m <= 8) or one (m > 8) of them
// in flight, the warps' partials added in warp order through shared memory. No chunk of
// K, no workspace, no atomics: deterministic (bit-identical from run to run on one device
// and shape) and held to the same accuracy budget as the seed's entries.
//
// Grid: (ceil(N/8), 1, 1)  Block: (32 x warps, 1, 1). Same operands and guards as
// w8a16_gemm_m16_strided, plus 1 <= warps <= W8A16_GEMM_M16_ROWS8_MAX_WARPS.
#pragma once

#include <cstdint>

#include "metrale/gpu_backend.hpp"
#include "metrale/w8a16_gemm_m16_splitk.hpp"

namespace metrale {

// The kernel's launch bounds (896 threads) keep both builds within 72 registers.
inline constexpr std::uint32_t W8A16_GEMM_M16_ROWS8_MAX_WARPS = 28;

// `kernel`: the handle of "w8a16_gemm_m16_rows8" (both token builds: see
// guards::build_for_tokens). M16LaunchOptions::chunk_cluster changes nothing here.
void w8a16_gemm_m16_rows8(const GpuBackend& gpu, KernelHandle kernel, DevicePtr input,
                          DevicePtr weight, DevicePtr block_scale, DevicePtr output,
                          std::uint32_t m, std::uint32_t n, std::uint32_t k,
                          std::uint32_t a_row_stride, std::uint32_t c_row_stride,
                          std::uint32_t warps, StreamHandle stream, M16LaunchOptions options = {});

}  // namespace metrale
