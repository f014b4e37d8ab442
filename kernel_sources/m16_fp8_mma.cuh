// The FP8 tensor-core form of the stream-K unit (sm_90): a warpgroup's 64 weight rows x
// 128 K go to wgmma.m64nNk32.e4m3 straight from the ring, as the E4M3 bytes the tensor
// copy landed (128-byte swizzle), with no decode, no NaN check and no register staging;
// each token's 128 activations of the K block are split once per stage into two E4M3
// terms with a power-of-two scale s, x = s * (hi + lo / 16), which the MMA reads as the
// B operand's rows: hi of the tokens in rows 0 .. 8 TG - 1, lo in rows 8 TG .. 16 TG - 1.
//
// Why: on the BF16 tensor cores every weight pair costs a PRMT, a shift, a LOP3 and an
// HFMA2 before its MMA, plus the NaN check, and those integer instructions take about as
// long as the ring takes to bring the bytes (docs/performance.md, item 95). Hopper runs
// FP8 MMAs natively only as wgmma (mma.sync on E4M3 is emulated through F16 there).
//
// Exactness of the split: s puts the block's largest |x| in [128, 256) (y = x / s, hi =
// rn_e4m3(y)). For |y| >= 2^-6, hi keeps y's top 4 significant bits and r = y - hi, a
// multiple of y's BF16 ULP no larger than 2^-4 |y|, has at most 4 significant bits, so
// lo = 16 r is an E4M3 value and hi + lo / 16 == y exactly. Below 2^-6, i.e. under 2^-14
// of the block's largest, lo rounds on the 2^-13 grid of y: an error of at most 2^-22 of
// the block's largest element. Every product in the MMA is exact; the hi and lo partials
// are folded in FP32 once per block, as the BF16 form folds its one partial. A NaN weight
// or activation makes its products NaN in the tensor core; an infinite activation is
// carried as hi = +-1 with s = inf, so the output is +-inf, or NaN where its weight is
// zero, as in the reference.
#pragma once

#include "m16_stream_pipeline.cuh"

namespace {

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

// Orders this thread's generic-proxy writes to shared memory before the tensor cores'
// (async proxy) reads of them.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// Byte b (0..127) of row r of a 128-byte-swizzled operand whose base is 1024-byte aligned:
// 16-byte chunk c of the row lies at chunk c ^ (r % 8), as the tensor copy lays out the
// weights and as wgmma reads both operands.
__device__ __forceinline__ u32 swizzled_byte(u32 r, u32 b) {
  return 128 * r + ((((b / 16) ^ (r % 8)) * 16) | (b % 16));
}

// One warp splits one token's 128 BF16 activations of a K block (256 bytes at `x_row`,
// lane l holding elements 4l .. 4l + 3) into the B operand at `b_base`: hi codes to row
// `token`, lo codes to row `lo_row`; s goes to `scale_at`.
__device__ __forceinline__ void split_token_block(u32 x_row, u32 b_base, u32 token, u32 lo_row,
                                                  u32 scale_at, u32 lane) {
  u32 raw0, raw1;
  asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];" : "=r"(raw0), "=r"(raw1) : "r"(x_row + 8 * lane));
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
  float y[4], r[4], h[4];
#pragma unroll
  for (u32 i = 0; i < 4; ++i) y[i] = v[i] * inv_s;
  const u32 hi = f32x4_to_e4m3x4(y[0], y[1], y[2], y[3]);
  e4m3x2_to_f32(hi, h[0], h[1]);
  e4m3x2_to_f32(hi >> 16, h[2], h[3]);
#pragma unroll
  for (u32 i = 0; i < 4; ++i) r[i] = (y[i] - h[i]) * 16.0f;
  const u32 lo = f32x4_to_e4m3x4(r[0], r[1], r[2], r[3]);
  store_shared_u32(b_base + swizzled_byte(token, 4 * lane), hi);
  store_shared_u32(b_base + swizzled_byte(lo_row, 4 * lane), lo);
  if (lane == 0) store_shared_f32(scale_at, s);
}

// A wgmma shared-memory descriptor of a K-major operand in the 128-byte swizzle: rows of
// 128 bytes, groups of 8 rows 1024 bytes apart (the stride offset); the leading offset is
// unused in this mode.
__device__ __forceinline__ u64 sw128_descriptor(u32 addr) {
  return static_cast<u64>((addr & 0x3FFFFu) >> 4) | (static_cast<u64>(1) << 16) |
         (static_cast<u64>(1024 >> 4) << 32) | (static_cast<u64>(1) << 62);
}

__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
__device__ __forceinline__ void wgmma_wait_all() {
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
}

// D = A * B over 32 K for the warpgroup's 64 rows and N = 16 columns (8 tokens' hi
// and lo), E4M3 inputs, FP32 results; D starts from zero (scale-d = 0).
__device__ __forceinline__ void wgmma_m64n16k32_e4m3(float (&d)[8], u64 a, u64 b) {
  asm volatile(
      "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, 0, 0;\n\t"
      "wgmma.mma_async.sync.aligned.m64n16k32.f32.e4m3.e4m3 "
      "{%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, p, 1, 1;\n\t}"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]), "=f"(d[4]), "=f"(d[5]), "=f"(d[6]),
        "=f"(d[7])
      : "l"(a), "l"(b)
      : "memory");
}

// The same for N = 32 columns (16 tokens' hi and lo), D = A * B.
__device__ __forceinline__ void wgmma_m64n32k32_e4m3(float (&d)[16], u64 a, u64 b) {
  asm volatile(
      "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, 0, 0;\n\t"
      "wgmma.mma_async.sync.aligned.m64n32k32.f32.e4m3.e4m3 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, p, 1, 1;\n\t}"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]), "=f"(d[4]), "=f"(d[5]), "=f"(d[6]),
        "=f"(d[7]), "=f"(d[8]), "=f"(d[9]), "=f"(d[10]), "=f"(d[11]), "=f"(d[12]), "=f"(d[13]),
        "=f"(d[14]), "=f"(d[15])
      : "l"(a), "l"(b)
      : "memory");
}

// The bytes of a stage's B operand: 16 rows of 128 bytes per token group.
constexpr u32 kSplitBytesPerGroup = 2048;

// One warpgroup's 64 rows x one 128-K block of a stage: 4 wgmmas of 32 K, then for the
// calling thread's fragment (rows g and g + 8 of its warp's 16, tokens 8 tg + 2t and the
// next) acc += block_scale * s_token * (hi + lo / 16). w_base: the warpgroup's 64 weight
// rows (1024-byte aligned); b_base: the stage's B operand; scales: its s per token.
//
// Each wgmma starts from zero and the four are added in FP32: Hopper's FP8 MMA keeps its
// running sum in about 13 mantissa bits, truncated, so a chain of four over the block
// loses bits relative to the block's partial that the accuracy floor does not allow
// (docs/performance.md, item 96).
template <u32 kTokenGroups>
__device__ __forceinline__ void compute_block_fp8(float (&acc)[kTokenGroups][4], u32 w_base,
                                                  u32 b_base, u32 scales, u32 t,
                                                  float block_scale, bool fold) {
  float step[4][8 * kTokenGroups];
  const u64 a = sw128_descriptor(w_base);
  const u64 b = sw128_descriptor(b_base);
  wgmma_fence();
#pragma unroll
  for (u32 kk = 0; kk < 4; ++kk) {  // 32 bytes of K a step: 2 in the descriptor's units
    if constexpr (kTokenGroups == 1) {
      wgmma_m64n16k32_e4m3(step[kk], a + 2 * kk, b + 2 * kk);
    } else {
      wgmma_m64n32k32_e4m3(step[kk], a + 2 * kk, b + 2 * kk);
    }
  }
  wgmma_commit();
  wgmma_wait_all();
  // The results are written asynchronously: keep every read of them after the wait.
#pragma unroll
  for (u32 kk = 0; kk < 4; ++kk) {
#pragma unroll
    for (u32 i = 0; i < 8 * kTokenGroups; ++i) asm volatile("" : "+f"(step[kk][i])::"memory");
  }
  float d[8 * kTokenGroups];
#pragma unroll
  for (u32 i = 0; i < 8 * kTokenGroups; ++i) d[i] = (step[0][i] + step[1][i]) + (step[2][i] + step[3][i]);
  if (!fold) return;
#pragma unroll
  for (u32 tg = 0; tg < kTokenGroups; ++tg) {
    float s0, s1;
    asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];" : "=f"(s0), "=f"(s1) : "r"(scales + 4 * (8 * tg + 2 * t)));
    const float scale[2] = {block_scale * s0, block_scale * s1};
#pragma unroll
    for (u32 e = 0; e < 4; ++e) {
      const float hi = d[4 * tg + e], lo = d[4 * kTokenGroups + 4 * tg + e];
      acc[tg][e] = __fmaf_rn(scale[e % 2], __fmaf_rn(0.0625f, lo, hi), acc[tg][e]);
#if defined(METRALE_DEFECT_BF16_ACCUM)
      acc[tg][e] = bf16_to_f32(f32_to_bf16_rn(acc[tg][e]));
#endif
    }
  }
}

}  // namespace
