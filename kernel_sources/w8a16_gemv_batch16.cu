// w8a16_gemv_batch16 / w8a16_gemv_batch16_strided: the scalar FFMA reference for the
// W8A16 decode GEMM. One thread owns one output column j and up to 16 rows:
//
//   for each 128-K block b:  p_i = 0; for kk in block: p_i = fma(w[j][k], x[i][k], p_i)
//                            acc_i = fma(s[j/128][b], p_i, acc_i)
//   y[i][j] = bf16_rn(acc_i)
//
// Sequential FP32 accumulation inside each block, the block scale folded once per block,
// 16 FFMA per weight byte. cpu_w8a16_gemv (runtime/host_reference.cpp) performs the
// same operations in the same order; the two agree bit for bit.
//
// Grid: (ceil(N/128), 1, 1)  Block: (128, 1, 1).  m in 1..16, K a multiple of 128.
#include "metrale_device.cuh"

namespace {

constexpr u32 kMaxRows = 16;
constexpr u32 kBlockK = 128;

__device__ __forceinline__ void gemv_batch16(const u16* __restrict__ input,
                                             const u8* __restrict__ weight,
                                             const float* __restrict__ block_scale,
                                             u16* __restrict__ output, u32 m, u32 n, u32 k,
                                             u32 a_row_stride, u32 c_row_stride) {
  const u32 j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= n) return;
  const u32 k_blocks = k / kBlockK;
  const u8* w_row = weight + static_cast<u64>(j) * k;
  const float* s_row = block_scale + static_cast<u64>(j / kBlockK) * k_blocks;

  float acc[kMaxRows];
#pragma unroll
  for (u32 i = 0; i < kMaxRows; ++i) acc[i] = 0.0f;

  for (u32 b = 0; b < k_blocks; ++b) {
    float p[kMaxRows];
#pragma unroll
    for (u32 i = 0; i < kMaxRows; ++i) p[i] = 0.0f;
    for (u32 chunk = 0; chunk < kBlockK; chunk += 16) {
      const u32 k0 = b * kBlockK + chunk;
      const uint4 w16 = *reinterpret_cast<const uint4*>(w_row + k0);
      const u32 words[4] = {w16.x, w16.y, w16.z, w16.w};
#pragma unroll
      for (u32 q = 0; q < 4; ++q) {
#pragma unroll
        for (u32 h = 0; h < 2; ++h) {
          const u32 pair = fp8x2_e4m3_to_bf16x2(words[q] >> (16 * h));
          const float w_lo = bf16_to_f32(pair & 0xFFFFu);
          const float w_hi = bf16_to_f32(pair >> 16);
          const u32 kk = k0 + 4 * q + 2 * h;
#pragma unroll
          for (u32 i = 0; i < kMaxRows; ++i) {
            if (i < m) {
              const u16* x = input + static_cast<u64>(i) * a_row_stride + kk;
              p[i] = __fmaf_rn(w_lo, bf16_to_f32(x[0]), p[i]);
              p[i] = __fmaf_rn(w_hi, bf16_to_f32(x[1]), p[i]);
            }
          }
        }
      }
    }
    const float s = s_row[b];
#pragma unroll
    for (u32 i = 0; i < kMaxRows; ++i) acc[i] = __fmaf_rn(s, p[i], acc[i]);
  }
#pragma unroll
  for (u32 i = 0; i < kMaxRows; ++i) {
    if (i < m) output[static_cast<u64>(i) * c_row_stride + j] = f32_to_bf16_rn(acc[i]);
  }
}

}  // namespace

// One kernel for both entries: the contiguous one passes its pitches k and n.
extern "C" __global__ void __launch_bounds__(128)
w8a16_gemv_batch16_strided(const u16* __restrict__ input, const u8* __restrict__ weight,
                           const float* __restrict__ block_scale, u16* __restrict__ output,
                           u32 m, u32 n, u32 k, u32 a_row_stride, u32 c_row_stride) {
  gemv_batch16(input, weight, block_scale, output, m, n, k, a_row_stride, c_row_stride);
}
