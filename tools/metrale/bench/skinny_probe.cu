// skinny_probe: a measurement for small layers, not a library entry. It asks how close
// a register-fed tensor-core GEMM gets to the read kernel when every warp has exactly one
// 128-K block of 16 weight rows, so that all weights are requested at once by many warps
// per SM and the decode and MMAs of one warp overlap the others'.
//
// CTA (c, g) of grid (K / 1024, N / 16) owns rows 16g .. 16g+15 and K chunk c (1024 K):
// warp w loads block 8c + w straight into registers (16 bytes per thread per row half and
// K half, evict-first), its activations from L2, decodes and runs 8 MMAs (m <= 8, tokens
// as the n = 8 operand, K permuted as in w8a16_gemm_m16.cu). The 8 warps' partials are
// added in warp order through shared memory; the chunks of a row group then meet in one
// of two ways, both in chunk order (deterministic):
//   flagged = 0: a cluster of the row group's chunks (cluster (K/1024, 1, 1)); chunk 0
//                reads the others' partials through distributed shared memory;
//   flagged = 1: chunks 1.. write each value with a flag beside it into `partials`
//                (one 64-bit word, st.relaxed.gpu) and go on; chunk 0 polls the words,
//                adds them, clears them and stores (`partials`: N / 16 x K / 1024 x 128
//                words, zero before and after). The launch needs each row group's
//                CTAs resident together; CTAs start in index order, chunk 0 first.
// A chunk-0 CTA that waits too long (a defect, not a schedule) writes NaN and gives up.
//
// Block: 256 threads. m in 1..8, N a multiple of 16, K a multiple of 1024 up to 8192.
#include "metrale_device.cuh"

namespace {

constexpr u32 kWarps = 8;
constexpr u32 kBlockK = 128;
constexpr u32 kMaxChunks = 8;
constexpr u32 kOutputs = 16 * 8;  // rows x tokens of a CTA's partial
constexpr u64 kFlag = u64{1} << 32;
constexpr u32 kMaxPolls = 1u << 22;

__device__ __forceinline__ void store_flagged(u64* at, u64 v) {
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" :: "l"(at), "l"(v) : "memory");
}

__device__ __forceinline__ u64 load_flagged(const u64* at) {
  u64 v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(at) : "memory");
  return v;
}

}  // namespace

extern "C" __global__ void __launch_bounds__(256)
skinny_probe(const u16* __restrict__ x, const u8* __restrict__ w,
             const float* __restrict__ scales, u16* __restrict__ out, u32 m, u32 n, u32 k,
             u64* __restrict__ partials, u32 flagged) {
  __shared__ float red[kWarps][16][9];
  __shared__ float tile[kOutputs];
  const u32 chunk = blockIdx.x;
  const u32 chunks = gridDim.x;
  const u32 group = blockIdx.y;
  const u32 warp = threadIdx.x / 32;
  const u32 lane = threadIdx.x % 32;
  const u32 g = lane / 4;
  const u32 t = lane % 4;
  const u32 b = chunk * kWarps + warp;
  const u32 row0 = group * 16;
  const u64 policy = l2_evict_first_policy();

  uint4 wv[2][2];  // [row g / g+8][K half]
#pragma unroll
  for (u32 half = 0; half < 2; ++half)
#pragma unroll
    for (u32 h = 0; h < 2; ++h) {
      wv[half][h] = load_stream_16(
          w + static_cast<u64>(row0 + g + 8 * half) * k + b * kBlockK + 64 * h + 16 * t, policy);
    }
  const float scale = scales[static_cast<u64>(row0 / 128) * (k / kBlockK) + b];
  uint4 xv[2][2];  // [K half][first / second 8 k] of token g
#pragma unroll
  for (u32 h = 0; h < 2; ++h) {
    if (g < m) {
      const uint4* src =
          reinterpret_cast<const uint4*>(x + static_cast<u64>(g) * k + b * kBlockK + 64 * h + 16 * t);
      xv[h][0] = src[0];
      xv[h][1] = src[1];
    } else {
      xv[h][0] = xv[h][1] = make_uint4(0, 0, 0, 0);
    }
  }

  float part[2][4] = {{0.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}};
#pragma unroll
  for (u32 h = 0; h < 2; ++h) {
    const u32 lo_words[4] = {wv[0][h].x, wv[0][h].y, wv[0][h].z, wv[0][h].w};
    const u32 hi_words[4] = {wv[1][h].x, wv[1][h].y, wv[1][h].z, wv[1][h].w};
#pragma unroll
    for (u32 q = 0; q < 4; ++q) {
      u32 a[4];
      fp8x4_e4m3_to_bf16x2_fast(lo_words[q], a[0], a[2]);
      fp8x4_e4m3_to_bf16x2_fast(hi_words[q], a[1], a[3]);
      const uint4 xs = xv[h][q / 2];
      const u32 bfrag[2] = {(q % 2 == 0) ? xs.x : xs.z, (q % 2 == 0) ? xs.y : xs.w};
      mma_m16n8k16_bf16(part[h], a, bfrag);
    }
  }
  // C fragment element e: row g + 8 (e / 2), token 2t + (e % 2).
#pragma unroll
  for (u32 e = 0; e < 4; ++e) red[warp][g + 8 * (e / 2)][2 * t + (e % 2)] = scale * (part[0][e] + part[1][e]);
  __syncthreads();

  const u32 row = threadIdx.x / 8;
  const u32 token = threadIdx.x % 8;
  float sum = 0.0f;
  if (threadIdx.x < kOutputs) {
#pragma unroll
    for (u32 v = 0; v < kWarps; ++v) sum += red[v][row][token];
  }
  const bool writes = threadIdx.x < kOutputs && token < m;
  u16* const dst = out + static_cast<u64>(token) * n + row0 + row;

  if (!flagged) {
    if (threadIdx.x < kOutputs) tile[threadIdx.x] = sum;
    cluster_sync();
    if (chunk == 0 && threadIdx.x < kOutputs) {
      float v[kMaxChunks];
#pragma unroll
      for (u32 q = 1; q < kMaxChunks; ++q) v[q] = q < chunks ? load_cluster_f32(&tile[threadIdx.x], q) : 0.0f;
#pragma unroll
      for (u32 q = 1; q < kMaxChunks; ++q) {
        if (q < chunks) sum += v[q];
      }
      if (writes) *dst = f32_to_bf16_rn(sum);
    }
    cluster_sync();  // no CTA leaves while chunk 0 may still read its tile
    return;
  }

  if (threadIdx.x >= kOutputs) return;
  u64* const slots = partials + static_cast<u64>(group) * chunks * kOutputs + threadIdx.x;
  if (chunk != 0) {
    store_flagged(slots + chunk * kOutputs, kFlag | __float_as_uint(sum));
    return;
  }
  u64 words[kMaxChunks];
  u32 polls = 0;
  bool all = false;
  while (!all && polls < kMaxPolls) {
    all = true;
#pragma unroll
    for (u32 q = 1; q < kMaxChunks; ++q) {
      words[q] = q < chunks ? load_flagged(slots + q * kOutputs) : kFlag;
      all = all && (words[q] & kFlag) != 0;
    }
    ++polls;
  }
  if (!all) {
    if (writes) *dst = 0x7FC0;  // a BF16 NaN: the check reports it
    return;
  }
#pragma unroll
  for (u32 q = 1; q < kMaxChunks; ++q) {
    if (q < chunks) {
      sum += __uint_as_float(static_cast<u32>(words[q]));
      store_flagged(slots + q * kOutputs, 0);
    }
  }
  if (writes) *dst = f32_to_bf16_rn(sum);
}
