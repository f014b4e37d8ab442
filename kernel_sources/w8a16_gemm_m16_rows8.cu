// w8a16_gemm_m16_rows8: the tensor-core W8A16 decode GEMM with a 16-row M tile on 8
// weight rows per CTA, each CTA covering all of K: for small layers (DeepSeek-V3 kv_a,
// q_a) where a CTA per 16 rows either leaves most SMs idle or must split K and hand
// partials between CTAs.
//
//   y[i][j] = bf16_rn( sum_w sum_b s[j/128][b] * P_b[i][j] ),  b over warp w's blocks
//
// Why: kv_a (576 x 7168) has 36 groups of 16 rows. A CTA per group on all of K holds
// 112 KiB of weights, more than its warps' registers keep in flight at once, so the
// skinny entry splits K into chunks whose partials meet through L2 (0.6-1.1 us a launch,
// docs/performance.md item 66). Eight rows per CTA halve that: 72 CTAs of 56 KiB, which
// 28 warps of two 128-K blocks each request at once with no chunk to hand off. The MMA
// then takes the tokens as its 16-row A operand and the 8 weight rows as B (n = 8): one
// MMA per 16 k serves every m up to 16, so 16 tokens cost the same MMAs as one.
//
// Per warp and block (8 rows x 128 K): lane (g, t) loads 16 bytes of row g at 64 h + 16 t
// of each 64-K half h, K permuted inside the half as in w8a16_gemm_m16.cu: word q of the
// 16 bytes is MMA q's B fragment (k 2t, 2t+1 | 2t+8, 2t+9 <- bytes 4q .. 4q+3), and the
// A fragment takes token g's (and g + 8's) activations at the same 16 k. FP8 is decoded
// with integer moves and one BF16 FMA per pair; a NaN code poisons its output row.
// Each block's partial is folded with one FMA per element onto the warp's FP32
// accumulator; the warps' accumulators are added in warp order through shared memory.
// Deterministic, no atomics.
//
// A warp takes blocks w, w + W, ... of K (warps w and w ^ 1 read the two 128-byte halves
// of the same 256 bytes of each row together, so its loads ask L2 to fill 256 bytes), and
// keeps ROWS8_BUFFERS of them in flight, weights and activations, each buffer reloaded
// with the warp's next block once its MMAs have read it.
//
// Launched as a programmatic dependent launch, a CTA requests its first weights while the
// preceding kernel still runs and waits for it before reading activations.
//
// Grid: (ceil(N/8), 1, 1)  Block: (32 W, 1, 1), W in 1..32 (at most the launch bounds)
// Dynamic shared memory: W x 16 TOKEN_GROUPS x 8 floats. m in 1..16, K a multiple of 128.
// Built twice, TOKEN_GROUPS=1 for m <= 8 (the A operand's tokens 8..15 are zero) and 2 for
// m in 9..16, as w8a16_gemm_m16.cu. Tuning defines: ROWS8_BUFFERS (blocks in flight per
// warp), ROWS8_MAX_THREADS (the launch bounds, which cap the registers).
#include "metrale_device.cuh"

namespace {

constexpr u32 kBlockK = 128;
constexpr u32 kRows = 8;

#if TOKEN_GROUPS == 1 || TOKEN_GROUPS == 2
constexpr u32 kTokenGroups = TOKEN_GROUPS;
#else
#error "build with TOKEN_GROUPS=1 (m <= 8) or TOKEN_GROUPS=2 (m in 9..16)"
#endif
constexpr u32 kTokens = 8 * kTokenGroups;

// Two blocks in flight per warp up to 8 tokens (70 registers with NVRTC 13.0, so 28 warps
// fit an SM's registers); one above (72; two would take 109).
#ifndef ROWS8_BUFFERS
#if TOKEN_GROUPS == 1
#define ROWS8_BUFFERS 2
#else
#define ROWS8_BUFFERS 1
#endif
#endif
constexpr u32 kBuffers = ROWS8_BUFFERS;

// 28 warps per CTA at most: the registers of both builds stay within 72.
#ifndef ROWS8_MAX_THREADS
#define ROWS8_MAX_THREADS 896
#endif

// One block of one lane: its 16 weight bytes of row g in each 64-K half, token 8 tg + g's
// activations at the same k, and the block's scale.
struct Rows8Block {
  uint4 w[2];                  // [half]
  uint4 x[2][kTokenGroups][2];  // [half][token group][first / second 8 k]
  float scale;
};

__device__ __forceinline__ void load_weights(Rows8Block& blk, const Operands& op, u32 row0, u32 b,
                                             u64 policy, u32 g, u32 t) {
  const u32 row = row0 + g;
#pragma unroll
  for (u32 h = 0; h < 2; ++h) {
    const u8* p = op.weight + static_cast<u64>(row) * op.k + b * kBlockK + 64 * h + 16 * t;
    blk.w[h] = row < op.n ? load_stream_16<true>(p, policy) : make_uint4(0, 0, 0, 0);
  }
  blk.scale = op.block_scale[static_cast<u64>(row0 / kBlockK) * (op.k / kBlockK) + b];
}

__device__ __forceinline__ void load_activations(Rows8Block& blk, const Operands& op, u32 b, u32 g,
                                                 u32 t) {
#pragma unroll
  for (u32 h = 0; h < 2; ++h)
#pragma unroll
    for (u32 tg = 0; tg < kTokenGroups; ++tg) {
      const u32 token = 8 * tg + g;
      if (token < op.m) {
        const u16* src =
            op.input + static_cast<u64>(token) * op.a_row_stride + b * kBlockK + 64 * h + 16 * t;
        blk.x[h][tg][0] = load_shared_ro_16(src);
        blk.x[h][tg][1] = load_shared_ro_16(src + 8);
      } else {
        blk.x[h][tg][0] = blk.x[h][tg][1] = make_uint4(0, 0, 0, 0);
      }
    }
}

// acc += scale * (the block's partial): 8 MMAs, the tokens as A and the rows as B.
__device__ __forceinline__ void block_mma(float (&acc)[4], u32& nan_bits, const Rows8Block& blk) {
  float part[4];
  set_zero(part);
#pragma unroll
  for (u32 h = 0; h < 2; ++h) {
    const u32 words[4] = {blk.w[h].x, blk.w[h].y, blk.w[h].z, blk.w[h].w};
#pragma unroll
    for (u32 q = 0; q < 4; ++q) {
      u32 b[2];
      fp8x4_e4m3_to_bf16x2_fast(words[q], b[0], b[1]);
      nan_bits |= fp8x4_nan_bits(words[q]);
      // A: token g (slots 0, 2) and g + 8 (slots 1, 3) at the k of word q.
      const uint4 lo = blk.x[h][0][q / 2];
      u32 a[4];
      a[0] = (q % 2 == 0) ? lo.x : lo.z;
      a[2] = (q % 2 == 0) ? lo.y : lo.w;
      if constexpr (kTokenGroups == 2) {
        const uint4 hi = blk.x[h][1][q / 2];
        a[1] = (q % 2 == 0) ? hi.x : hi.z;
        a[3] = (q % 2 == 0) ? hi.y : hi.w;
      } else {
        a[1] = a[3] = 0;
      }
      mma_m16n8k16_bf16(part, a, b);
    }
  }
#pragma unroll
  for (u32 e = 0; e < 4; ++e) acc[e] = __fmaf_rn(blk.scale, part[e], acc[e]);
}

// The warp's blocks first + j W (j < count), kBuffers of them in flight.
__device__ __forceinline__ void stream_blocks(float (&acc)[4], u32& nan_bits, const Operands& op,
                                              u32 row0, u32 first, u32 count, u32 stride,
                                              u64 policy, u32 g, u32 t) {
  Rows8Block buf[kBuffers];
#pragma unroll
  for (u32 s = 0; s < kBuffers; ++s) {
    if (s < count) load_weights(buf[s], op, row0, first + s * stride, policy, g, t);
  }
  wait_for_preceding_grid();
#pragma unroll
  for (u32 s = 0; s < kBuffers; ++s) {
    if (s < count) load_activations(buf[s], op, first + s * stride, g, t);
  }
#pragma unroll 1
  for (u32 j0 = 0; j0 < count; j0 += kBuffers) {
#pragma unroll
    for (u32 s = 0; s < kBuffers; ++s) {
      const u32 j = j0 + s;
      if (j < count) {
        block_mma(acc, nan_bits, buf[s]);
        if (j + kBuffers < count) {
          const u32 b = first + (j + kBuffers) * stride;
          load_weights(buf[s], op, row0, b, policy, g, t);
          load_activations(buf[s], op, b, g, t);
        }
      }
    }
  }
}

// A NaN weight makes its whole output row NaN, as in the reference. Lane (g, t) saw row
// g's codes and holds the outputs of rows 2t and 2t + 1: a ballot carries the rows over.
__device__ __forceinline__ void poison_nan_rows(float (&acc)[4], u32 nan_bits) {
  const u32 seen = __ballot_sync(0xFFFFFFFFu, (nan_bits & 0x80808080u) != 0);
  const u32 t = threadIdx.x % 4;
#pragma unroll
  for (u32 e = 0; e < 4; ++e) {
    const u32 row = 2 * t + (e % 2);
    if (seen & (0xFu << (4 * row))) acc[e] = __int_as_float(0x7FC00000);
  }
}

__device__ __forceinline__ void gemm_rows8(const Operands& op) {
  extern __shared__ float red[];  // [warp][token][row]
  const u32 warps = blockDim.x / 32;
  const u32 warp = threadIdx.x / 32;
  const u32 lane = threadIdx.x % 32;
  const u32 g = lane / 4;
  const u32 t = lane % 4;
  const u32 row0 = blockIdx.x * kRows;
  const u32 k_blocks = op.k / kBlockK;
  const u32 count = warp < k_blocks ? (k_blocks - warp + warps - 1) / warps : 0;
  const u64 policy = l2_evict_first_policy();

  float acc[4];
  set_zero(acc);
  u32 nan_bits = 0;
  stream_blocks(acc, nan_bits, op, row0, warp, count, warps, policy, g, t);
  poison_nan_rows(acc, nan_bits);

  // C fragment element e: token g + 8 (e / 2), row 2t + (e % 2).
#pragma unroll
  for (u32 e = 0; e < 4; ++e) {
    const u32 token = g + 8 * (e / 2);
    if (token < kTokens) red[(warp * kTokens + token) * kRows + 2 * t + (e % 2)] = acc[e];
  }
  __syncthreads();
  for (u32 idx = threadIdx.x; idx < kRows * op.m; idx += blockDim.x) {
    float sum = 0.0f;
#pragma unroll 4
    for (u32 w = 0; w < warps; ++w) sum += red[w * kTokens * kRows + idx];
    const u32 row = row0 + idx % kRows;
    if (row < op.n) op.output[static_cast<u64>(idx / kRows) * op.c_row_stride + row] = f32_to_bf16_rn(sum);
  }
}

// --- The bulk form: the CTA's 8 rows x K land in shared memory by bulk copies (the
// copy engine, not the warps' loads), one barrier per round of W blocks. ---

__device__ __forceinline__ uint4 load_shared_16(u32 addr) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(addr));
  return v;
}

__device__ __forceinline__ void bulk_barrier_init(u32 bar) {
  asm volatile("mbarrier.init.shared.b64 [%0], 1;" :: "r"(bar) : "memory");
}

__device__ __forceinline__ void bulk_expect(u32 bar, u32 bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;" :: "r"(bar), "r"(bytes) : "memory");
}

__device__ __forceinline__ void bulk_copy(u32 dst, const void* src, u32 bytes, u32 bar, u64 policy) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1], %2, [%3], %4;"
      :: "r"(dst), "l"(src), "r"(bytes), "r"(bar), "l"(policy) : "memory");
}

__device__ __forceinline__ void bulk_wait(u32 bar) {
  asm volatile(
      "{\n\t.reg .pred done;\n"
      "WAIT:\n\t"
      "mbarrier.try_wait.parity.shared.b64 done, [%0], 0;\n\t"
      "@!done bra WAIT;\n\t}"
      :: "r"(bar) : "memory");
}

__device__ __forceinline__ void gemm_rows8_bulk(const Operands& op) {
  extern __shared__ __align__(128) unsigned char smem[];  // [8 rows][K] | red | barriers
  const u32 warps = blockDim.x / 32;
  const u32 warp = threadIdx.x / 32;
  const u32 lane = threadIdx.x % 32;
  const u32 g = lane / 4;
  const u32 t = lane % 4;
  const u32 row0 = blockIdx.x * kRows;
  const u32 k_blocks = op.k / kBlockK;
  const u32 rounds = (k_blocks + warps - 1) / warps;
  float* const red = reinterpret_cast<float*>(smem + kRows * op.k);
  const u32 bars = shared_address(smem + kRows * op.k + warps * kTokens * kRows * 4);
  const u32 rows_valid = op.n - row0 < kRows ? op.n - row0 : kRows;
  const u32 weights = shared_address(smem);
  if (threadIdx.x == 0) {
    for (u32 r = 0; r < rounds; ++r) bulk_barrier_init(bars + 8 * r);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    const u64 policy = l2_evict_first_policy();
    for (u32 r = 0; r < rounds; ++r) {
      const u32 b0 = r * warps;
      const u32 nb = k_blocks - b0 < warps ? k_blocks - b0 : warps;
      bulk_expect(bars + 8 * r, rows_valid * nb * kBlockK);
      for (u32 row = 0; row < rows_valid; ++row) {
        bulk_copy(weights + row * op.k + b0 * kBlockK,
                  op.weight + static_cast<u64>(row0 + row) * op.k + b0 * kBlockK, nb * kBlockK,
                  bars + 8 * r, policy);
      }
    }
  }
  __syncthreads();
  wait_for_preceding_grid();

  float acc[4];
  set_zero(acc);
  u32 nan_bits = 0;
  const u32 count = warp < k_blocks ? (k_blocks - warp + warps - 1) / warps : 0;
  Rows8Block cur, next;
  if (count > 0) load_activations(cur, op, warp, g, t);
#pragma unroll 1
  for (u32 j = 0; j < count; ++j) {
    const u32 b = warp + j * warps;
    if (j + 1 < count) load_activations(next, op, b + warps, g, t);
    bulk_wait(bars + 8 * j);
#pragma unroll
    for (u32 h = 0; h < 2; ++h) cur.w[h] = load_shared_16(weights + g * op.k + b * kBlockK + 64 * h + 16 * t);
    cur.scale = op.block_scale[static_cast<u64>(row0 / kBlockK) * k_blocks + b];
    block_mma(acc, nan_bits, cur);
    if (j + 1 < count) cur = next;
  }
  poison_nan_rows(acc, nan_bits);
#pragma unroll
  for (u32 e = 0; e < 4; ++e) {
    const u32 token = g + 8 * (e / 2);
    if (token < kTokens) red[(warp * kTokens + token) * kRows + 2 * t + (e % 2)] = acc[e];
  }
  __syncthreads();
  for (u32 idx = threadIdx.x; idx < kRows * op.m; idx += blockDim.x) {
    float sum = 0.0f;
#pragma unroll 4
    for (u32 w = 0; w < warps; ++w) sum += red[w * kTokens * kRows + idx];
    const u32 row = row0 + idx % kRows;
    if (row < op.n) op.output[static_cast<u64>(idx / kRows) * op.c_row_stride + row] = f32_to_bf16_rn(sum);
  }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(ROWS8_MAX_THREADS, 1)
w8a16_gemm_m16_rows8(const u16* __restrict__ input, const u8* __restrict__ weight,
                     const float* __restrict__ block_scale, u16* __restrict__ output, u32 m, u32 n,
                     u32 k, u32 a_row_stride, u32 c_row_stride) {
  // The next kernel of the stream may launch once every CTA of this one has started.
  allow_dependent_grid();
  gemm_rows8(Operands{input, weight, block_scale, output, m, n, k, a_row_stride, c_row_stride});
}

extern "C" __global__ void __launch_bounds__(ROWS8_MAX_THREADS, 1)
w8a16_gemm_m16_rows8_bulk(const u16* __restrict__ input, const u8* __restrict__ weight,
                          const float* __restrict__ block_scale, u16* __restrict__ output, u32 m,
                          u32 n, u32 k, u32 a_row_stride, u32 c_row_stride) {
  allow_dependent_grid();
  gemm_rows8_bulk(Operands{input, weight, block_scale, output, m, n, k, a_row_stride, c_row_stride});
}
