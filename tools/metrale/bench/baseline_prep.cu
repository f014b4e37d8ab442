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
