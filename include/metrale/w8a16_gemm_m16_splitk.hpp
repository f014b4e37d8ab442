// Split-K entry of the M16 tensor-core GEMM (the strided kernel of
// kernel_sources/w8a16_gemm_m16.cu, launched in clusters; its handle comes from the
// strided variant's modules): each 32-column tile is computed by a thread-block cluster
// of `split` CTAs, CTA r reducing the r-th share of the 128-K blocks; the partial tiles
// are added in rank order through distributed shared memory. Deterministic
// (bit-identical from run to run), no atomics, and held to the same accuracy budget as
// the seed's entries. It fills the GPU where ceil(N/32) tiles alone would leave SMs idle
// (skinny N, small layers).
//
// Grid: (ceil(N/32), split, 1)  Block: (128, 1, 1)  Cluster: (1, split, 1).
// Same operands and guards as w8a16_gemm_m16_strided, plus 1 <= split <= 8 and
// split <= K/128.
#pragma once

#include <cstdint>

#include "metrale/gpu_backend.hpp"
#include "metrale/m16_launch_options.hpp"
// The launch plan (plan_m16_gemm) was declared here before m16_plan.hpp held it.
#include "metrale/m16_plan.hpp"

namespace metrale {

// The largest portable cluster: the most CTAs one tile is split across.
inline constexpr std::uint32_t W8A16_GEMM_M16_SPLITK_MAX = 8;

void w8a16_gemm_m16_splitk(const GpuBackend& gpu, KernelHandle kernel, DevicePtr input,
                           DevicePtr weight, DevicePtr block_scale, DevicePtr output,
                           std::uint32_t m, std::uint32_t n, std::uint32_t k,
                           std::uint32_t a_row_stride, std::uint32_t c_row_stride,
                           std::uint32_t split, StreamHandle stream,
                           M16LaunchOptions options = {});

}  // namespace metrale
