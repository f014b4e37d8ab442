// The FP8 tensor-core form of a streaming warp's 16 rows x 128 K (sm_89+): the weights go
// to mma.m16n8k32.e4m3 as the E4M3 bytes they are, with no decode and no NaN check, and
// each token's 128 activations of the K block are split once per CTA into two E4M3 terms
// with a power-of-two scale s, x = s * (hi + lo / 16).
//
// Why: on the BF16 tensor cores every weight pair costs a PRMT, a shift, a LOP3 and an
// HFMA2 before its MMA, plus the NaN check, and at 16 tokens those integer instructions
// take as long as the ring takes to bring the bytes (docs/performance.md, item 95). Here
// the integer work per weight is gone; what is added is m x 128 activations' split per
// stage, shared by the CTA's 8 warps.
//
// Exactness of the split: s puts the block's largest |x| in [128, 256) (y = x / s, hi =
// rn_e4m3(y)). For |y| >= 2^-6 hi keeps y's top 4 significant bits and r = y - hi, a
// multiple of y's BF16 ULP no larger than 2^-4 |y|, has at most 4 significant bits;
// 16 r is an E4M3 value (normal or on the 2^-9 subnormal grid), so hi + lo / 16 == y
// exactly. Below 2^-6, i.e. under 2^-14 of the block's largest, lo rounds on the 2^-13
// grid of y: an error of at most 2^-22 of the block's largest element. Every product of
// the MMAs is exact; each 32-K MMA adds its products in the tensor core's own order, so a
// block partial differs from the scalar path's by a few FP32 ULP of the running sum,
// within the contract of oracle.hpp. A NaN weight or activation makes its products NaN in
// the tensor core; an infinite activation is carried as hi = +-1 with s = inf, so the
// output is +-inf, or NaN where its weight is zero, as in the reference.
#pragma once

#include "m16_stream_pipeline.cuh"

namespace {

// D = A * B + C for one m16n8k32 tile, E4M3 inputs, FP32 accumulators (sm_89+).
__device__ __forceinline__ void mma_m16n8k32_e4m3(float (&d)[4], const u32 (&a)[4], u32 b0,
                                                  u32 b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Four FP32 values to four E4M3 codes (round to nearest even, saturating to +-448; NaN
// stays NaN), v0 in the lowest byte.
__device__ __forceinline__ u32 f32x4_to_e4m3x4(float v0, float v1, float v2, float v3) {
  u16 lo, hi;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(lo) : "f"(v1), "f"(v0));
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(hi) : "f"(v3), "f"(v2));
  return static_cast<u32>(lo) | (static_cast<u32>(hi) << 16);
}

// Two E4M3 codes (low byte first) to their exact FP32 values.
__device__ __forceinline__ void e4m3x2_to_f32(u32 two_codes, float& v0, float& v1) {
  u32 h2;
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2) : "h"(static_cast<u16>(two_codes)));
  asm("{\n\t.reg .b16 l, h;\n\tmov.b32 {l, h}, %2;\n\tcvt.f32.f16 %0, l;\n\tcvt.f32.f16 %1, h;\n\t}"
      : "=f"(v0), "=f"(v1)
      : "r"(h2));
}

__device__ __forceinline__ void store_shared_u32(u32 addr, u32 v) {
  asm volatile("st.shared.u32 [%0], %1;" :: "r"(addr), "r"(v) : "memory");
}

__device__ __forceinline__ void store_shared_f32(u32 addr, float v) {
  asm volatile("st.shared.f32 [%0], %1;" :: "r"(addr), "f"(v) : "memory");
}

// Orders this thread's generic-proxy writes to shared memory before later tensor copies
// (async proxy) into the same bytes.
__device__ __forceinline__ void fence_proxy_async_shared() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}

// Where byte b (0..127) of a term of `token` lies in its 128 bytes: rows of odd tokens
// have their 64-byte halves swapped, so the readers' quarter-warps (tokens 2j and 2j + 1
// at the same offset, rows 256 bytes apart) fall on disjoint banks.
__device__ __forceinline__ u32 term_byte(u32 token, u32 b) { return b ^ (64 * (token & 1)); }

// One warp splits one token's 128 BF16 activations of a K block, in place: the 256 bytes
// at `row` become the 128 hi codes then the 128 lo codes (term_byte order), and s goes
// to `scale_at`. Lane l holds elements 4l .. 4l + 3.
__device__ __forceinline__ void split_token_block(u32 row, u32 token, u32 scale_at, u32 lane) {
  u32 raw0, raw1;
  asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];" : "=r"(raw0), "=r"(raw1) : "r"(row + 8 * lane));
  float v[4] = {__uint_as_float(raw0 << 16), __uint_as_float(raw0 & 0xFFFF0000u),
                __uint_as_float(raw1 << 16), __uint_as_float(raw1 & 0xFFFF0000u)};
  float largest = fmaxf(fmaxf(fabsf(v[0]), fabsf(v[1])), fmaxf(fabsf(v[2]), fabsf(v[3])));
#pragma unroll
  for (u32 o = 16; o > 0; o >>= 1) largest = fmaxf(largest, __shfl_xor_sync(0xFFFFFFFFu, largest, o));
  // The largest magnitude's biased exponent e: 1 / s = 2^(134 - e) puts it in [128, 256).
  const u32 e = __float_as_uint(largest) >> 23;
  float inv_s, s;
  if (e == 255) {  // an infinity (or only NaN): the infinities as +-1, s = inf
#pragma unroll
    for (u32 i = 0; i < 4; ++i) {
      const bool inf = fabsf(v[i]) == __uint_as_float(0x7F800000u);
      v[i] = inf ? copysignf(1.0f, v[i]) : (v[i] != v[i] ? v[i] : 0.0f);
    }
    inv_s = 1.0f;
    s = __uint_as_float(0x7F800000u);
  } else if (e >= 8) {
    inv_s = __uint_as_float((261u - e) << 23);
    s = __uint_as_float((e - 7u) << 23);
  } else {  // a block under 2^-119: the largest scale that keeps s an FP32 value
    inv_s = __uint_as_float(254u << 23);
    s = __uint_as_float(0x00400000u);  // 2^-127
  }
  float y[4], r[4];
#pragma unroll
  for (u32 i = 0; i < 4; ++i) y[i] = v[i] * inv_s;
  const u32 hi = f32x4_to_e4m3x4(y[0], y[1], y[2], y[3]);
  float h[4];
  e4m3x2_to_f32(hi, h[0], h[1]);
  e4m3x2_to_f32(hi >> 16, h[2], h[3]);
#pragma unroll
  for (u32 i = 0; i < 4; ++i) r[i] = (y[i] - h[i]) * 16.0f;
  const u32 lo = f32x4_to_e4m3x4(r[0], r[1], r[2], r[3]);
  __syncwarp();  // every lane has read its BF16 before any lane overwrites the row
  store_shared_u32(row + term_byte(token, 4 * lane), hi);
  store_shared_u32(row + 128 + term_byte(token, 4 * lane), lo);
  if (lane == 0) store_shared_f32(scale_at, s);
}

// Where one lane reads inside its warp's part of a stage: weights as FragmentOffsets
// (rows g and g + 8, odd g loading its K halves in the other order), and for token group
// tg and K half h the 16 hi codes of token 8 tg + g at K 64 h + 16 t (the lo codes 128
// bytes on). Tokens past m read token m - 1: their MMA columns are never stored.
template <u32 kTokenGroups>
struct Fp8Offsets {
  u32 w[2][2];             // [g / g+8][load order]
  u32 x[kTokenGroups][2];  // [token group][K half]
  u32 scales[kTokenGroups];  // the scales of tokens 8 tg + 2t and the next, in a stage's array
  bool odd;
};

template <u32 kTokenGroups>
__device__ __forceinline__ Fp8Offsets<kTokenGroups> fp8_offsets(u32 m, u32 g, u32 t,
                                                                u32 token_pitch) {
  Fp8Offsets<kTokenGroups> f;
  f.odd = (g & 1) != 0;
#pragma unroll
  for (u32 half = 0; half < 2; ++half)
#pragma unroll
    for (u32 h = 0; h < 2; ++h) f.w[half][h] = (8 * half + g) * 128 + 64 * (h ^ (g & 1)) + 16 * t;
#pragma unroll
  for (u32 tg = 0; tg < kTokenGroups; ++tg) {
    const u32 token = 8 * tg + g < m ? 8 * tg + g : m - 1;
#pragma unroll
    for (u32 h = 0; h < 2; ++h) f.x[tg][h] = token * token_pitch + term_byte(token, 64 * h + 16 * t);
    f.scales[tg] = 4 * (8 * tg + 2 * t);
  }
  return f;
}

// One warp's 16 rows x one 128-K block: the hi and lo terms' partials on the FP8 tensor
// cores, then acc += block_scale * s_token * (hi + lo / 16). x_base: the stage's split
// activations; scales: the stage's array of s per token.
template <u32 kTokenGroups>
__device__ __forceinline__ void compute_block_fp8(float (&acc)[kTokenGroups][4],
                                                  const Fp8Offsets<kTokenGroups>& f, u32 w_base,
                                                  u32 x_base, u32 scales, float block_scale,
                                                  bool fold) {
  float part[2][kTokenGroups][4];  // [hi / lo]
  set_zero(part);
  uint4 w[2][2];
#pragma unroll
  for (u32 half = 0; half < 2; ++half)
#pragma unroll
    for (u32 h = 0; h < 2; ++h) w[half][h] = load_shared_16(w_base + f.w[half][h]);
#pragma unroll
  for (u32 h = 0; h < 2; ++h) {
    const uint4 lo = f.odd ? w[0][h ^ 1] : w[0][h];  // row g, K half h
    const uint4 hi = f.odd ? w[1][h ^ 1] : w[1][h];  // row g + 8
    const u32 a[2][4] = {{lo.x, hi.x, lo.y, hi.y}, {lo.z, hi.z, lo.w, hi.w}};
#pragma unroll
    for (u32 term = 0; term < 2; ++term)
#pragma unroll
      for (u32 tg = 0; tg < kTokenGroups; ++tg) {
        const uint4 xs = load_shared_16(x_base + 128 * term + f.x[tg][h]);
        mma_m16n8k32_e4m3(part[term][tg], a[0], xs.x, xs.y);
        mma_m16n8k32_e4m3(part[term][tg], a[1], xs.z, xs.w);
      }
  }
  if (!fold) return;
#pragma unroll
  for (u32 tg = 0; tg < kTokenGroups; ++tg) {
    float s0, s1;
    asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];" : "=f"(s0), "=f"(s1) : "r"(scales + f.scales[tg]));
    const float scale[2] = {block_scale * s0, block_scale * s1};
#pragma unroll
    for (u32 e = 0; e < 4; ++e) {
      acc[tg][e] = __fmaf_rn(scale[e % 2], __fmaf_rn(0.0625f, part[1][tg][e], part[0][tg][e]),
                             acc[tg][e]);
#if defined(METRALE_DEFECT_BF16_ACCUM)
      acc[tg][e] = bf16_to_f32(f32_to_bf16_rn(acc[tg][e]));
#endif
    }
  }
}

}  // namespace
