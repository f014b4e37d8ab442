// Device helpers shared by the kernels: integer types, BF16 and FP8 E4M3 conversions and
// the PTX wrappers. No toolkit header is included: NVRTC compiles the kernels with
// nothing but its built-ins, so BF16 is a 16-bit integer here and every conversion is
// an instruction or a bit move written out below.
#pragma once

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;

__device__ __forceinline__ float bf16_to_f32(u32 bits16) {
  return __uint_as_float(bits16 << 16);
}

// Round to nearest even (cvt.rn.bf16.f32, sm_80+); NaN stays NaN.
__device__ __forceinline__ u16 f32_to_bf16_rn(float f) {
  u16 r;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(f));
  return r;
}

// One E4M3 code to BF16 bits with integer moves only. Exact: normals move their
// exponent from bias 7 to bias 127 (+120) and keep the 3 mantissa bits; subnormals
// (m * 2^-9) go through an exact FP32 product; 0x7F/0xFF become a quiet NaN.
__device__ __forceinline__ u32 fp8_e4m3_to_bf16_int(u32 code) {
  const u32 sign = (code & 0x80u) << 8;
  const u32 mag = code & 0x7Fu;
  u32 bits;
  if (mag == 0x7Fu) {
    bits = 0x7FC0u;
  } else if (mag >= 8u) {
    bits = (mag << 4) + (120u << 7);
  } else {
    bits = __float_as_uint(static_cast<float>(mag) * 0.001953125f) >> 16;
  }
  return sign | bits;
}

// Two E4M3 codes (low byte first) to a packed BF16 pair (low half = first code).
__device__ __forceinline__ u32 fp8x2_e4m3_to_bf16x2(u32 two_codes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  // sm_89+: the hardware E4M3 -> F16 conversion (exact, NaN preserved), then F16 ->
  // F32 -> BF16, exact for every E4M3 value.
  u32 h2;
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2) : "h"(static_cast<u16>(two_codes)));
  float lo, hi;
  asm("{\n\t.reg .b16 l, h;\n\tmov.b32 {l, h}, %2;\n\tcvt.f32.f16 %0, l;\n\tcvt.f32.f16 %1, h;\n\t}"
      : "=f"(lo), "=f"(hi)
      : "r"(h2));
  u32 r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
#else
  // sm_80/86 have no FP8 conversion instruction: the bit-exact integer path.
  return fp8_e4m3_to_bf16_int(two_codes & 0xFFu) |
         (fp8_e4m3_to_bf16_int((two_codes >> 8) & 0xFFu) << 16);
#endif
}

// 16 bytes of weights, read once: no L1 allocation (nothing re-reads them).
__device__ __forceinline__ uint4 load_stream_16(const void* p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

// 16 bytes of activations: read-only path, cached (every CTA reads the same rows).
__device__ __forceinline__ uint4 load_shared_ro_16(const void* p) {
  uint4 v;
  asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

// D = A * B + C for one m16n8k16 tile, BF16 inputs, FP32 accumulators.
__device__ __forceinline__ void mma_m16n8k16_bf16(float (&d)[4], const u32 (&a)[4],
                                                  const u32 (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
