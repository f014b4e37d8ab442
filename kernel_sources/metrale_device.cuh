// Device helpers shared by the kernels: integer types, BF16 and FP8 E4M3 conversions and
// the PTX wrappers. No toolkit header is included: NVRTC compiles the kernels with
// nothing but its built-ins, so BF16 is a 16-bit integer here and every conversion is
// an instruction or a bit move written out below.
#pragma once

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;

// The operands of the W8A16 GEMM entries, in their parameter order.
struct Operands {
  const u16* input;
  const u8* weight;
  const float* block_scale;
  u16* output;
  u32 m, n, k, a_row_stride, c_row_stride;
};

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

// Four E4M3 codes (one word, k order b0..b3) to two packed BF16 pairs, lo = (b0, b1) and
// hi = (b2, b3), with integer moves and one BF16 FMA per pair: no conversion-pipe
// instruction, and the same code on every target from sm_80. PRMT spreads each byte into a 16-bit lane with its sign byte
// replicated above it; shifted left by 4 and masked, the lane holds sign | e | m as a
// BF16 whose exponent is biased by 7 instead of 127, i.e. the value times 2^-120 (E4M3
// subnormals land on BF16 subnormals, exactly); the FMA by 2^120 restores it exactly.
// NaN codes (0x7F, 0xFF) come out as +-480: callers detect them with fp8x4_nan_bits or
// fp8x4_nan_flags.
__device__ __forceinline__ u32 e4m3_lanes_to_bf16x2(u32 lanes) {
  const u32 biased = (lanes << 4) & 0x87F087F0u;
  u32 r;
  asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(biased), "r"(0x7B807B80u), "r"(0x80008000u));
  return r;
}

// prmt in its generic mode; a selector nibble with bit 3 set replicates the sign of the
// byte it names (__byte_perm ignores that bit, hence the PTX).
__device__ __forceinline__ u32 prmt(u32 a, u32 selector) {
  u32 r;
  asm("prmt.b32 %0, %1, 0, %2;" : "=r"(r) : "r"(a), "r"(selector));
  return r;
}

// prmt over the 8 bytes of {b, a}: selector byte indices 4..7 take b's bytes.
__device__ __forceinline__ u32 prmt(u32 a, u32 b, u32 selector) {
  u32 r;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(selector));
  return r;
}

// fp8x4_e4m3_to_bf16x2_fast of a (selectors 0x9180, 0xB3A2) or of b (the same selectors
// with 4 added to every byte index: 0xD5C4, 0xF7E6), chosen per thread by the selectors
// at no extra instruction.
__device__ __forceinline__ void fp8x4_e4m3_to_bf16x2_pick(u32 a, u32 b, u32 sel_lo, u32 sel_hi,
                                                          u32& lo, u32& hi) {
  lo = e4m3_lanes_to_bf16x2(prmt(a, b, sel_lo));
  hi = e4m3_lanes_to_bf16x2(prmt(a, b, sel_hi));
}

__device__ __forceinline__ void fp8x4_e4m3_to_bf16x2_fast(u32 w, u32& lo, u32& hi) {
  lo = e4m3_lanes_to_bf16x2(prmt(w, 0x9180));  // [sign(b1) b1 sign(b0) b0]
  hi = e4m3_lanes_to_bf16x2(prmt(w, 0xB3A2));  // [sign(b3) b3 sign(b2) b2]
}

// Bit 7 of some byte of the result is set if and only if some byte of w is a NaN code
// (0x7F, 0xFF): adding one to a byte flips its bit 7 for those two codes alone, and only
// 0xFF carries out of a byte, so the lowest NaN byte always flips and no byte flips
// below it. A byte above a NaN may flip too: the result says whether the word holds a
// NaN code, not where. Callers keep bit 7 of each byte (0x80808080) after accumulating;
// one add and one logic operation per word, the XOR fused into the OR that accumulates.
__device__ __forceinline__ u32 fp8x4_nan_flags(u32 w) {
  return (w + 0x01010101u) ^ w;
}

// Bit 7 of a byte of the result is set where that byte of w is a NaN code (low seven bits
// all ones: adding one carries into bit 7, and only then). One more operation per word
// than fp8x4_nan_flags, but the deep kernels' builds hold fewer registers with it
// (ptxas of CUDA 13.0: 62 against 68 in the 8-token build), and their CTAs per SM
// follow their registers.
__device__ __forceinline__ u32 fp8x4_nan_bits(u32 w) {
  return ((w & 0x7F7F7F7Fu) + 0x01010101u) & 0x80808080u;
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

// One 64-K half of a 16-row block in registers, the weights as the MMA's A operand and
// the tokens as B (n = 8 per token group): lo / hi are this lane's 16 weight bytes of rows
// g and g + 8, K permuted inside the 64-wide chunk so that word q holds the A fragment's
// k of MMA q; x[tg] are the lane's two 16-byte activation pieces of token 8 tg + g at the
// same k. Four MMAs per token group onto part, and the NaN codes seen into nan_bits, with
// fp8x4_nan_flags where kNanFlags (one instruction less per word, a few more registers:
// for the kernels whose CTAs per SM those registers do not change), else fp8x4_nan_bits.
template <u32 kTokenGroups, bool kNanFlags = false>
__device__ __forceinline__ void mma_half_block(float (&part)[kTokenGroups][4], u32 (&nan_bits)[2],
                                               uint4 lo, uint4 hi,
                                               const uint4 (&x)[kTokenGroups][2]) {
  const u32 lo_words[4] = {lo.x, lo.y, lo.z, lo.w};
  const u32 hi_words[4] = {hi.x, hi.y, hi.z, hi.w};
#pragma unroll
  for (u32 q = 0; q < 4; ++q) {
    u32 a[4];
    fp8x4_e4m3_to_bf16x2_fast(lo_words[q], a[0], a[2]);  // row g:   slots 0,1 | 2,3
    fp8x4_e4m3_to_bf16x2_fast(hi_words[q], a[1], a[3]);  // row g+8: slots 0,1 | 2,3
    nan_bits[0] |= kNanFlags ? fp8x4_nan_flags(lo_words[q]) : fp8x4_nan_bits(lo_words[q]);
    nan_bits[1] |= kNanFlags ? fp8x4_nan_flags(hi_words[q]) : fp8x4_nan_bits(hi_words[q]);
#pragma unroll
    for (u32 tg = 0; tg < kTokenGroups; ++tg) {
      const uint4 xs = x[tg][q / 2];
      const u32 bfrag[2] = {(q % 2 == 0) ? xs.x : xs.z, (q % 2 == 0) ? xs.y : xs.w};
      mma_m16n8k16_bf16(part[tg], a, bfrag);
    }
  }
}

// A NaN weight makes its whole output column NaN, as in the reference: the four lanes
// of a quad hold different k of the same rows, so they pool what they saw. nan_bits: per
// half (rows g, g + 8), bit 7 of some byte set where a NaN code was seen (fp8x4_nan_bits or
// fp8x4_nan_flags, accumulated over words of that half's row only).
template <u32 kTokenGroups>
__device__ __forceinline__ void poison_nan_columns(float (&acc)[kTokenGroups][4],
                                                   const u32 (&nan_bits)[2]) {
#pragma unroll
  for (u32 half = 0; half < 2; ++half) {
    u32 seen = nan_bits[half] & 0x80808080u;
    seen |= __shfl_xor_sync(0xFFFFFFFFu, seen, 1);
    seen |= __shfl_xor_sync(0xFFFFFFFFu, seen, 2);
    if (seen != 0) {
#pragma unroll
      for (u32 tg = 0; tg < kTokenGroups; ++tg) {
        acc[tg][2 * half] = __int_as_float(0x7FC00000);
        acc[tg][2 * half + 1] = __int_as_float(0x7FC00000);
      }
    }
  }
}

// Every element of a (nested) float array set to 0, unrolled: accumulators of any shape.
__device__ __forceinline__ void set_zero(float& v) { v = 0.0f; }
template <typename T, u32 N>
__device__ __forceinline__ void set_zero(T (&a)[N]) {
#pragma unroll
  for (u32 i = 0; i < N; ++i) set_zero(a[i]);
}

// An L2 policy that evicts first what is loaded with it: for weights, read exactly once,
// so that the activations every CTA re-reads stay in L2.
__device__ __forceinline__ u64 l2_evict_first_policy() {
  u64 policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

// An L2 policy that evicts last what is stored or loaded with it: for a workspace every
// launch writes and reads (split partials), whose lines then stay in L2 between launches
// instead of going back to DRAM under the weights' stream. Not volatile: one per kernel.
__device__ __forceinline__ u64 l2_evict_last_policy() {
  u64 policy;
  asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

// 16 bytes of weights, read once: no L1 allocation, L2 policy as above. With kFill256,
// L2 fills the whole aligned 256 bytes around a miss (the level::prefetch_size qualifier):
// where two warps read the two 128-byte halves of the same 256 bytes at about the same
// time, DRAM sees one 256-byte read instead of two of 128. kOrdered: a coherent load, not
// .nc, for loads issued ahead of griddepcontrol.wait: ptxas 13.0 may schedule the wait
// above an .nc load (no grid writes what it reads), and did so in the deep kernel's
// stepped loop (SKINNY_DEEP_CURSOR), but keeps a coherent load above it.
template <bool kFill256 = false, bool kOrdered = false>
__device__ __forceinline__ uint4 load_stream_16(const void* p, u64 policy) {
  uint4 v;
  if constexpr (kOrdered && kFill256) {
    asm volatile("ld.global.L1::no_allocate.L2::cache_hint.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p), "l"(policy));
  } else if constexpr (kOrdered) {
    asm volatile("ld.global.L1::no_allocate.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p), "l"(policy));
  } else if constexpr (kFill256) {
    asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p), "l"(policy));
  } else {
    asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p), "l"(policy));
  }
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

// The 32-bit shared-window address of a generic pointer to shared memory.
__device__ __forceinline__ u32 shared_address(const void* p) {
  u64 generic = reinterpret_cast<u64>(p);
  u32 a;
  asm("{\n\t.reg .u64 s;\n\tcvta.to.shared.u64 s, %1;\n\tcvt.u32.u64 %0, s;\n\t}"
      : "=r"(a)
      : "l"(generic));
  return a;
}

// Thread-block clusters (sm_90): this CTA's rank and the cluster's size (1 when the
// kernel is launched without clusters).
__device__ __forceinline__ u32 cluster_rank() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  u32 r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
#else
  return 0;
#endif
}

__device__ __forceinline__ u32 cluster_size() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  u32 n;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
  return n;
#else
  return 1;
#endif
}

// Every thread of every CTA of the cluster arrives; shared-memory writes before it are
// visible to the cluster after it.
__device__ __forceinline__ void cluster_sync() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;"
               ::: "memory");
#else
  __syncthreads();
#endif
}

// The two halves of a cluster barrier, for CTAs that arrive early and wait later (or
// never: a thread that exits no longer counts). Every thread of a warp takes part.
__device__ __forceinline__ void cluster_arrive_relaxed() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
#endif
}

// Shared-memory writes before it, remote ones included, are visible to the cluster after
// the barrier's wait.
__device__ __forceinline__ void cluster_arrive_release() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
#endif
}

__device__ __forceinline__ void cluster_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
#endif
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// The address in CTA `rank` of the cluster of the shared variable at `local` in this CTA.
__device__ __forceinline__ u32 cluster_shared_address(const void* local, u32 rank) {
  u32 remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(shared_address(local)), "r"(rank));
  return remote;
}
#endif

// Writes a float to the shared memory of CTA `rank` of the cluster, at the address
// `local` has in this CTA.
__device__ __forceinline__ void store_cluster_f32(float* local, u32 rank, float v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const u32 remote = cluster_shared_address(local, rank);
  asm volatile("st.shared::cluster.f32 [%0], %1;" :: "r"(remote), "f"(v) : "memory");
#else
  (void)rank;
  *local = v;
#endif
}

// Reads a float from the shared memory of CTA `rank` of the cluster, at the address
// `local` has in this CTA.
__device__ __forceinline__ float load_cluster_f32(const float* local, u32 rank) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const u32 remote = cluster_shared_address(local, rank);
  float v;
  asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(remote) : "memory");
  return v;
#else
  (void)rank;
  return *local;
#endif
}

// The SM this thread runs on (for diagnostics).
__device__ __forceinline__ u32 sm_id() {
  u32 id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

// The device's SM ids (at least its SM count; what a grid of one CTA per SM fills).
__device__ __forceinline__ u32 sm_id_count() {
  u32 n;
  asm volatile("mov.u32 %0, %%nsmid;" : "=r"(n));
  return n;
}

// %globaltimer, in ns.
__device__ __forceinline__ u64 global_time_ns() {
  u64 t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Programmatic dependent launch (sm_90): lets the next kernel of the stream launch, and
// waits until the preceding one has finished and its writes are visible. Both return at
// once for a kernel launched without the attribute, and compile to nothing before sm_90.
__device__ __forceinline__ void allow_dependent_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

__device__ __forceinline__ void wait_for_preceding_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
