// Operands for the cuBLAS baselines, made on the device from the benchmark's own FP8
// weights so the baselines multiply the same matrices the library's kernels do.
#include "metrale_device.cuh"

// out[j][k] = bf16_rn(fp8(w[j][k]) * s[j/128][k/128]): the BF16 weights a user without
// an FP8 kernel would keep after dequantizing the checkpoint once. Grid-stride; any grid.
extern "C" __global__ void dequantize_fp8_to_bf16(const u8* __restrict__ weight,
                                                  const float* __restrict__ block_scale,
                                                  u16* __restrict__ out, u32 n, u32 k) {
  const u64 total = static_cast<u64>(n) * k;
  const u32 k_blocks = k / 128u;
  const u64 stride = static_cast<u64>(gridDim.x) * blockDim.x;
  for (u64 i = static_cast<u64>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const u32 row = static_cast<u32>(i / k);
    const u32 col = static_cast<u32>(i % k);
    const float w = bf16_to_f32(fp8_e4m3_to_bf16_int(weight[i]));
    out[i] = f32_to_bf16_rn(w * block_scale[static_cast<u64>(row / 128u) * k_blocks + col / 128u]);
  }
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (u32 o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xFFFFFFFFu, v, o);
  return v;
}

// out[t][j] = scale * sum_c x(t, c) * w(j, c) in FP32 for t < m <= 16: what a baseline
// computes, from its own operands, to hold its outputs to (the runner's
// check_baseline_output). One warp per weight row, its lanes striding over K; the order
// of the adds is not cuBLAS's, so the two are compared within a tolerance.
template <typename X, typename W>
__device__ __forceinline__ void reference_rows(X x_at, W w_at, float scale, float* out, u32 m,
                                               u32 n, u32 k) {
  const u32 lane = threadIdx.x % 32;
  const u32 warps = gridDim.x * blockDim.x / 32;
  for (u32 j = (blockIdx.x * blockDim.x + threadIdx.x) / 32; j < n; j += warps) {
    float acc[16];
#pragma unroll
    for (u32 t = 0; t < 16; ++t) acc[t] = 0.0f;
    for (u32 c = lane; c < k; c += 32) {
      const float w = w_at(static_cast<u64>(j) * k + c);
#pragma unroll
      for (u32 t = 0; t < 16; ++t) {
        if (t < m) acc[t] += x_at(static_cast<u64>(t) * k + c) * w;
      }
    }
#pragma unroll
    for (u32 t = 0; t < 16; ++t) {
      if (t >= m) break;
      const float s = warp_sum(acc[t]);
      if (lane == 0) out[static_cast<u64>(t) * n + j] = s * scale;
    }
  }
}

// The BF16 baseline's product: BF16 activations [m, K] and weights [N, K].
extern "C" __global__ void reference_bf16_gemm(const u16* __restrict__ x,
                                               const u16* __restrict__ w,
                                               float* __restrict__ out, u32 m, u32 n, u32 k) {
  reference_rows([x](u64 i) { return bf16_to_f32(x[i]); },
                 [w](u64 i) { return bf16_to_f32(w[i]); }, 1.0f, out, m, n, k);
}

// The FP8 baseline's product: E4M3 activations [m, K] and weights [N, K], times the two
// per-tensor scales it is given.
extern "C" __global__ void reference_fp8_gemm(const u8* __restrict__ x, const u8* __restrict__ w,
                                              const float* __restrict__ w_scale,
                                              const float* __restrict__ x_scale,
                                              float* __restrict__ out, u32 m, u32 n, u32 k) {
  const auto decode = [](u8 code) { return bf16_to_f32(fp8_e4m3_to_bf16_int(code)); };
  reference_rows([x, decode](u64 i) { return decode(x[i]); },
                 [w, decode](u64 i) { return decode(w[i]); }, *w_scale * *x_scale, out, m, n, k);
}
