// w8a16_gemm_m16 / w8a16_gemm_m16_strided (N_TILE=32) and w8a16_gemm_m16_n64
// (N_TILE=64): the tensor-core W8A16 decode GEMM with a 16-row M tile.
//
//   y[i][j] = bf16_rn( sum_b s[j/128][b] * P_b[i][j] ),  P_b = FP32 partial of K block b
//
// Operands are swapped onto mma.m16n8k16: the 16-row A operand is 16 weight rows (output
// columns), B is 8 tokens, so m <= 8 needs one MMA per 16 weight rows and k16 step.
// K is permuted inside every 64-wide chunk so that both operands come from contiguous
// memory: in MMA step q (0..3) of a chunk, thread t's fragment slots (2t, 2t+1, 2t+8,
// 2t+9) hold physical k = 16t + 4q + (0, 1, 2, 3). Each thread thus loads 16 consecutive
// weight bytes of a row and 16 consecutive activations of a token per chunk; the sum
// over k is unchanged because A and B use the same permutation.
//
// A CTA of 4 warps owns N_TILE weight rows. Warp w takes the 128-K blocks w, w+4, ...;
// each block's partial starts from zero in the MMA accumulators and is folded with one
// FMA per element onto the warp's FP32 accumulator (the block scale is the same for the
// whole tile: N_TILE divides 128). The four warps' sums are added in a fixed order
// through shared memory, rounded to BF16 once and written coalesced.
//
// Grid: (ceil(N/N_TILE), 1, 1)  Block: (128, 1, 1).  m in 1..16, K a multiple of 128.
// Test builds may define one METRALE_DEFECT_* switch to plant a known defect; the
// shipped build defines none.
#include "metrale_device.cuh"

#ifndef N_TILE
#define N_TILE 32
#endif
#if N_TILE != 32 && N_TILE != 64
#error "N_TILE must be 32 or 64"
#endif

// Read back by the host when the module loads; must equal W8A16_GEMM_M16_N_TILE (32) or
// W8A16_GEMM_M16_N_TILE_WIDE (64).
#if N_TILE == 32
extern "C" __device__ unsigned int M16_N_TILE = N_TILE;
#else
extern "C" __device__ unsigned int M16_N_TILE_WIDE = N_TILE;
#endif

namespace {

constexpr u32 kThreads = 128;
constexpr u32 kWarps = kThreads / 32;
constexpr u32 kBlockK = 128;
constexpr u32 kRowGroups = N_TILE / 16;  // 16-row MMA A operands per tile
constexpr u32 kMaxTokens = 16;
constexpr u32 kRedStride = kMaxTokens + 1;  // padded row of the reduction buffer

struct Operands {
  const u16* input;
  const u8* weight;
  const float* block_scale;
  u16* output;
  u32 m, n, k, a_row_stride, c_row_stride;
};

// The weights one thread holds for one 128-K block: per row group, rows g and g+8,
// chunks h = 0, 1 (16 bytes each).
struct BlockWeights {
  uint4 w[kRowGroups][2][2];  // [row group][row g / g+8][chunk h]
};

__device__ __forceinline__ void load_block(BlockWeights& bw, const Operands& op, u32 n0, u32 b,
                                           u32 g, u32 t) {
#pragma unroll
  for (u32 r = 0; r < kRowGroups; ++r) {
#pragma unroll
    for (u32 half = 0; half < 2; ++half) {
      const u32 row = n0 + 16 * r + g + 8 * half;
#pragma unroll
      for (u32 h = 0; h < 2; ++h) {
        if (row < op.n) {
          bw.w[r][half][h] = load_stream_16(op.weight + static_cast<u64>(row) * op.k +
                                            b * kBlockK + 64 * h + 16 * t);
        } else {
          bw.w[r][half][h] = make_uint4(0, 0, 0, 0);
        }
      }
    }
  }
}

template <u32 kTokenGroups>
__device__ __forceinline__ void block_mma(float (&part)[kRowGroups][kTokenGroups][4],
                                          const BlockWeights& bw, const Operands& op, u32 b,
                                          u32 g, u32 t) {
#pragma unroll
  for (u32 h = 0; h < 2; ++h) {
    // B fragments: token 8*tg + g, activations 16t .. 16t+15 of chunk h.
    uint4 x[kTokenGroups][2];
#pragma unroll
    for (u32 tg = 0; tg < kTokenGroups; ++tg) {
      const u32 token = 8 * tg + g;
      if (token < op.m) {
        const u16* src = op.input + static_cast<u64>(token) * op.a_row_stride + b * kBlockK +
                         64 * h + 16 * t;
        x[tg][0] = load_shared_ro_16(src);
        x[tg][1] = load_shared_ro_16(src + 8);
      } else {
        x[tg][0] = make_uint4(0, 0, 0, 0);
        x[tg][1] = make_uint4(0, 0, 0, 0);
      }
    }
#pragma unroll
    for (u32 r = 0; r < kRowGroups; ++r) {
      const uint4 lo = bw.w[r][0][h];
      const uint4 hi = bw.w[r][1][h];
      const u32 lo_words[4] = {lo.x, lo.y, lo.z, lo.w};
      const u32 hi_words[4] = {hi.x, hi.y, hi.z, hi.w};
#pragma unroll
      for (u32 q = 0; q < 4; ++q) {
        u32 a[4];
        a[0] = fp8x2_e4m3_to_bf16x2(lo_words[q]);        // row g,   k slots 0, 1
        a[1] = fp8x2_e4m3_to_bf16x2(hi_words[q]);        // row g+8, k slots 0, 1
        a[2] = fp8x2_e4m3_to_bf16x2(lo_words[q] >> 16);  // row g,   k slots 2, 3
        a[3] = fp8x2_e4m3_to_bf16x2(hi_words[q] >> 16);  // row g+8, k slots 2, 3
#pragma unroll
        for (u32 tg = 0; tg < kTokenGroups; ++tg) {
          const uint4 xs = x[tg][q / 2];
          u32 bfrag[2];
          bfrag[0] = (q % 2 == 0) ? xs.x : xs.z;
          bfrag[1] = (q % 2 == 0) ? xs.y : xs.w;
          mma_m16n8k16_bf16(part[r][tg], a, bfrag);
        }
      }
    }
  }
}

template <u32 kTokenGroups>
__device__ __forceinline__ void gemm_m16(const Operands& op, float* red) {
  const u32 warp = threadIdx.x / 32;
  const u32 lane = threadIdx.x % 32;
  const u32 g = lane / 4;
  const u32 t = lane % 4;
  const u32 n0 = blockIdx.x * N_TILE;
  const u32 k_blocks = op.k / kBlockK;
  u32 scale_row = n0 / kBlockK;
#if defined(METRALE_DEFECT_WRONG_SCALE_ROW)
  scale_row = (scale_row + 1) % ((op.n + kBlockK - 1) / kBlockK);
#endif
  const float* scales = op.block_scale + static_cast<u64>(scale_row) * k_blocks;

  float acc[kRowGroups][kTokenGroups][4];
#pragma unroll
  for (u32 r = 0; r < kRowGroups; ++r)
#pragma unroll
    for (u32 tg = 0; tg < kTokenGroups; ++tg)
#pragma unroll
      for (u32 e = 0; e < 4; ++e) acc[r][tg][e] = 0.0f;

  BlockWeights current;
  if (warp < k_blocks) load_block(current, op, n0, warp, g, t);
  for (u32 b = warp; b < k_blocks; b += kWarps) {
    BlockWeights next;
    if (b + kWarps < k_blocks) load_block(next, op, n0, b + kWarps, g, t);
    const float s = scales[b];
    float part[kRowGroups][kTokenGroups][4];
#pragma unroll
    for (u32 r = 0; r < kRowGroups; ++r)
#pragma unroll
      for (u32 tg = 0; tg < kTokenGroups; ++tg)
#pragma unroll
        for (u32 e = 0; e < 4; ++e) part[r][tg][e] = 0.0f;
    block_mma<kTokenGroups>(part, current, op, b, g, t);
#if defined(METRALE_DEFECT_DROP_KBLOCK)
    const bool fold = (b != k_blocks - 1) || k_blocks == 1;
#else
    const bool fold = true;
#endif
    if (fold) {
#pragma unroll
      for (u32 r = 0; r < kRowGroups; ++r)
#pragma unroll
        for (u32 tg = 0; tg < kTokenGroups; ++tg)
#pragma unroll
          for (u32 e = 0; e < 4; ++e) {
            acc[r][tg][e] = __fmaf_rn(s, part[r][tg][e], acc[r][tg][e]);
#if defined(METRALE_DEFECT_BF16_ACCUM)
            acc[r][tg][e] = bf16_to_f32(f32_to_bf16_rn(acc[r][tg][e]));
#endif
          }
    }
    current = next;
  }

  // red[warp][row][token]: C fragment element e is row g + 8*(e/2), token 2t + (e%2).
#pragma unroll
  for (u32 r = 0; r < kRowGroups; ++r)
#pragma unroll
    for (u32 tg = 0; tg < kTokenGroups; ++tg)
#pragma unroll
      for (u32 e = 0; e < 4; ++e) {
        const u32 row = 16 * r + g + 8 * (e / 2);
        const u32 token = 8 * tg + 2 * t + (e % 2);
        red[(warp * N_TILE + row) * kRedStride + token] = acc[r][tg][e];
      }
  __syncthreads();

#if defined(METRALE_DEFECT_SKIP_LAST_TILE)
  if (blockIdx.x == gridDim.x - 1) return;
#endif
  for (u32 idx = threadIdx.x; idx < N_TILE * kMaxTokens; idx += kThreads) {
    const u32 token = idx / N_TILE;
    u32 col = idx % N_TILE;
    if (token >= op.m || n0 + col >= op.n) continue;
#if defined(METRALE_DEFECT_SHIFT_ROW)
    const u32 src_col = (token == 0) ? (col ^ 1u) : col;
#else
    const u32 src_col = col;
#endif
    float sum = 0.0f;
#pragma unroll
    for (u32 w = 0; w < kWarps; ++w) sum += red[(w * N_TILE + src_col) * kRedStride + token];
    op.output[static_cast<u64>(token) * op.c_row_stride + n0 + col] = f32_to_bf16_rn(sum);
  }
}

__device__ __forceinline__ void run(const Operands& op) {
  __shared__ float red[kWarps * N_TILE * kRedStride];
  if (op.m <= 8) {
    gemm_m16<1>(op, red);
  } else {
    gemm_m16<2>(op, red);
  }
}

}  // namespace

#if N_TILE == 32
extern "C" __global__ void __launch_bounds__(kThreads)
w8a16_gemm_m16(const u16* __restrict__ input, const u8* __restrict__ weight,
               const float* __restrict__ block_scale, u16* __restrict__ output, u32 m, u32 n,
               u32 k) {
  run(Operands{input, weight, block_scale, output, m, n, k, k, n});
}

extern "C" __global__ void __launch_bounds__(kThreads)
w8a16_gemm_m16_strided(const u16* __restrict__ input, const u8* __restrict__ weight,
                       const float* __restrict__ block_scale, u16* __restrict__ output, u32 m,
                       u32 n, u32 k, u32 a_row_stride, u32 c_row_stride) {
  run(Operands{input, weight, block_scale, output, m, n, k, a_row_stride, c_row_stride});
}
#else
extern "C" __global__ void __launch_bounds__(kThreads)
w8a16_gemm_m16_n64(const u16* __restrict__ input, const u8* __restrict__ weight,
                   const float* __restrict__ block_scale, u16* __restrict__ output, u32 m,
                   u32 n, u32 k) {
  run(Operands{input, weight, block_scale, output, m, n, k, k, n});
}
#endif
