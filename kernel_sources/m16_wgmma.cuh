// The warpgroup form of stream-K's unit (sm_90a): a warpgroup's 64 weight rows x one
// 128-K block on wgmma.m64nNk16 (BF16, FP32 accumulators), the decoded weights as the A
// operand from registers and the tokens' activations as the B operand straight from the
// stage in shared memory; and the activations' layout in a stage, which the copies, this
// form and the mma.sync form all read.
//
// Why: with mma.sync every warp loads every token's activations of every K block from
// shared memory into registers (4 16-byte loads per token group per block, half of the
// stage's shared-memory reads at 16 tokens) and issues 8 dependent MMAs per token group;
// here the tensor cores read B themselves and one asynchronous wgmma per 16 K covers all
// of a warpgroup's rows and tokens. The decode and the NaN check are the mma.sync form's.
//
// The activations of a stage: two K halves of 64 BF16 (128 bytes) per token, each half
// TOKEN_GROUPS x 1024 bytes in the 128-byte swizzle (token r's row at 128 r, its 16-byte
// chunk c at c ^ (r % 8)), as a tensor copy of 64 x m elements with CU_TENSOR_MAP_SWIZZLE_128B
// lands it and as wgmma reads a K-major operand with rows 128 bytes apart and groups of 8
// rows 1024 bytes apart.
//
// The K order. The weights reach the A fragment with K permuted inside each 64-K half
// (m16_stream_pipeline.cuh: lane t's 16 contiguous bytes 16t .. 16t + 15 feed MMA q with
// bytes 16t + 4q .. 16t + 4q + 3). The MMA's k positions 2t, 2t + 1 then hold physical k
// 16t + 4q, +1, and 2t + 8, 2t + 9 hold 16t + 4q + 2, +3: in 32-bit words (pairs of
// BF16) of a token's half row, logical word 8q + t is physical word 8t + 2q and logical
// word 8q + 4 + t is physical 8t + 2q + 1. So logical 16-byte chunk c holds physical
// words c, c + 8, c + 16, c + 24, a transpose of 4 x 8 words that the producer warp makes
// in place, one token's half row per lane, after the tensor copy lands
// (permute_activations), before the tensor cores read it.
#pragma once

#include "m16_stream_pipeline.cuh"

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define M16_HAS_WGMMA 1
#else
#define M16_HAS_WGMMA 0
#endif

namespace {

constexpr u32 kXAtomBytes = 1024;  // 8 token rows of 128 bytes: one swizzle atom
#if defined(TOKEN_GROUPS)
constexpr u32 kXHalfBytes = TOKEN_GROUPS * kXAtomBytes;  // one 64-K half of the tokens
#endif

// Where 16-byte chunk c of token r's half row lies in its half.
__device__ __forceinline__ u32 x_chunk_offset(u32 r, u32 c) {
  return 128 * r + 16 * (c ^ (r % 8));
}

__device__ __forceinline__ void store_shared_16(u32 addr, uint4 v) {
  asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};"
               :: "r"(addr), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}

// Orders this thread's generic-proxy writes to shared memory before the tensor cores'
// (async proxy) reads of them.
__device__ __forceinline__ void fence_proxy_async_shared() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}

__device__ __forceinline__ u32 word_of(const uint4 (&v)[8], u32 i) {
  const uint4 c = v[i / 4];
  return i % 4 == 0 ? c.x : i % 4 == 1 ? c.y : i % 4 == 2 ? c.z : c.w;
}

// Token r's half row in the half at `half_base`, put in the K order of the A fragment by
// the calling lane. Unrolled: every register index is a constant (no local memory).
__device__ __forceinline__ void permute_row(u32 half_base, u32 r) {
  uint4 v[8];
#pragma unroll
  for (u32 c = 0; c < 8; ++c) v[c] = load_shared_16(half_base + x_chunk_offset(r, c));
#pragma unroll
  for (u32 c = 0; c < 8; ++c) {
    store_shared_16(half_base + x_chunk_offset(r, c),
                    make_uint4(word_of(v, c), word_of(v, c + 8), word_of(v, c + 16), word_of(v, c + 24)));
  }
}

#if M16_HAS_WGMMA
// A wgmma shared-memory descriptor of a K-major operand in the 128-byte swizzle: rows of
// 128 bytes, groups of 8 rows 1024 bytes apart (the stride offset); the leading offset is
// unused in this mode. A step of 16 K (32 bytes) adds 2 to the descriptor.
__device__ __forceinline__ u64 sw128_descriptor(u32 addr) {
  return static_cast<u64>((addr & 0x3FFFFu) >> 4) | (u64{1} << 16) |
         (u64{kXAtomBytes >> 4} << 32) | (u64{1} << 62);
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_wait_all() { asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory"); }

// Keeps the compiler from moving accesses of v across the asynchronous MMA's issue or wait.
__device__ __forceinline__ void fence_operand(float& v) { asm volatile("" : "+f"(v) :: "memory"); }

// D (+)= A * B for the warpgroup's 64 rows x 16 K and 8 tokens (N = 8).
__device__ __forceinline__ void wgmma_bf16(float (&d)[4], const u32 (&a)[4], u64 b, bool accumulate) {
  asm volatile(
      "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %9, 0;\n\t"
      "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, %8, p, 1, 1, 0;\n\t}"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(static_cast<u32>(accumulate)));
}

// The same for 16 tokens (N = 16).
__device__ __forceinline__ void wgmma_bf16(float (&d)[8], const u32 (&a)[4], u64 b, bool accumulate) {
  asm volatile(
      "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %13, 0;\n\t"
      "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7}, {%8, %9, %10, %11}, %12, p, 1, 1, 0;\n\t}"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(static_cast<u32>(accumulate)));
}

// Independent accumulator chains per block (STREAMK_WGMMA_CHAINS, a tuning point: 1, 2 or
// 4): the block's 8 wgmmas go to them in turn and the chains are added before the scale.
#if defined(STREAMK_WGMMA_CHAINS)
constexpr u32 kWgmmaChains = STREAMK_WGMMA_CHAINS;
#else
constexpr u32 kWgmmaChains = 1;
#endif
static_assert(kWgmmaChains == 1 || kWgmmaChains == 2 || kWgmmaChains == 4,
              "STREAMK_WGMMA_CHAINS is 1, 2 or 4");

// One warpgroup's 64 rows x one 128-K block of a stage, the calling warp's 16 of them in
// registers: the block's partial onto `acc` (fragment (tg, e) = D column 8 tg + 2t + e % 2,
// row g + 8 (e / 2), the mma.sync form's layout). w_base: the warp's 16 weight rows; x_base:
// the stage's activations in the permuted order.
template <u32 kTokenGroups>
__device__ __forceinline__ void compute_block_wgmma(float (&acc)[kTokenGroups][4], u32 (&nan_bits)[2],
                                                    const FragmentOffsets<kTokenGroups>& f, u32 w_base,
                                                    u32 x_base, float scale, bool fold) {
  uint4 w[2][2];  // [g / g+8][load order: K half h ^ (g & 1)]
#pragma unroll
  for (u32 half = 0; half < 2; ++half)
#pragma unroll
    for (u32 h = 0; h < 2; ++h) w[half][h] = load_shared_16(w_base + f.w[half][h]);
#if !defined(METRALE_DIAG_NO_NAN_CHECK)
#pragma unroll
  for (u32 half = 0; half < 2; ++half)
#pragma unroll
    for (u32 h = 0; h < 2; ++h) {
      nan_accumulate(nan_bits[half], w[half][h].x, w[half][h].y);
      nan_accumulate(nan_bits[half], w[half][h].z, w[half][h].w);
    }
#endif
  u32 a[2][4][4];  // [K half][MMA q][fragment register]
#pragma unroll
  for (u32 h = 0; h < 2; ++h) {
    const uint4 lo = w[0][h], lo_other = w[0][h ^ 1];
    const uint4 hi = w[1][h], hi_other = w[1][h ^ 1];
    const u32 lo_words[4] = {lo.x, lo.y, lo.z, lo.w};
    const u32 lo_others[4] = {lo_other.x, lo_other.y, lo_other.z, lo_other.w};
    const u32 hi_words[4] = {hi.x, hi.y, hi.z, hi.w};
    const u32 hi_others[4] = {hi_other.x, hi_other.y, hi_other.z, hi_other.w};
#pragma unroll
    for (u32 q = 0; q < 4; ++q) {
#if defined(METRALE_DIAG_NO_DECODE)
      a[h][q][0] = lo_words[q]; a[h][q][2] = lo_others[q]; a[h][q][1] = hi_words[q]; a[h][q][3] = hi_others[q];
#else
      fp8x4_e4m3_to_bf16x2_pick(lo_words[q], lo_others[q], f.sel_lo, f.sel_hi, a[h][q][0], a[h][q][2]);
      fp8x4_e4m3_to_bf16x2_pick(hi_words[q], hi_others[q], f.sel_lo, f.sel_hi, a[h][q][1], a[h][q][3]);
#endif
    }
  }
  float d[kWgmmaChains][4 * kTokenGroups];
#pragma unroll
  for (u32 c = 0; c < kWgmmaChains; ++c)
#pragma unroll
    for (u32 i = 0; i < 4 * kTokenGroups; ++i) {
      d[c][i] = 0.0f;
      fence_operand(d[c][i]);
    }
  wgmma_fence();
#pragma unroll
  for (u32 s = 0; s < 8; ++s) {  // 16 K a step: K half s / 4, MMA s % 4
    wgmma_bf16(d[s % kWgmmaChains], a[s / 4][s % 4],
               sw128_descriptor(x_base + (s / 4) * kXHalfBytes + 32 * (s % 4)), s >= kWgmmaChains);
  }
  wgmma_commit();
  wgmma_wait_all();
#pragma unroll
  for (u32 c = 0; c < kWgmmaChains; ++c)
#pragma unroll
    for (u32 i = 0; i < 4 * kTokenGroups; ++i) fence_operand(d[c][i]);
  if (!fold) return;
#pragma unroll
  for (u32 tg = 0; tg < kTokenGroups; ++tg)
#pragma unroll
    for (u32 e = 0; e < 4; ++e) {
      float part = d[0][4 * tg + e];
#pragma unroll
      for (u32 c = 1; c < kWgmmaChains; ++c) part += d[c][4 * tg + e];
      acc[tg][e] = __fmaf_rn(scale, part, acc[tg][e]);
#if defined(METRALE_DEFECT_BF16_ACCUM)
      acc[tg][e] = bf16_to_f32(f32_to_bf16_rn(acc[tg][e]));
#endif
    }
}
#endif  // M16_HAS_WGMMA

}  // namespace
