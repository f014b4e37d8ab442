// The shared-memory weight ring of the streaming M16 entries (w8a16_gemm_m16_stream.cu,
// w8a16_gemm_m16_streamk.cu): the stage barriers, the copies that fill a stage (TMA on
// sm_90, cp.async before), and one warp's 16 rows x 128 K of a stage on the tensor cores.
// Included by one kernel source per module; everything is internal to it.
#pragma once

#include "metrale_device.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && !STREAM_NO_TMA
#define STREAM_TMA 1
#else
#define STREAM_TMA 0
#endif

namespace {

constexpr u32 kThreads = 256;
constexpr u32 kWarps = kThreads / 32;
constexpr u32 kBlockK = 128;
constexpr u32 kStageWeightBytes = 16384;  // the tile's rows x kparts K blocks
constexpr u32 kMaxTokens = 16;
constexpr u32 kMaxStages = 12;
constexpr u32 kTokenBytes = kBlockK * 2;  // one token's activations of one K block
#if defined(STREAM_MMA_CHAINS)
constexpr u32 kMmaChains = STREAM_MMA_CHAINS;  // a tuning point: 1 or 2
#else
constexpr u32 kMmaChains = 1;
#endif
static_assert(kMmaChains == 1 || kMmaChains == 2, "STREAM_MMA_CHAINS is 1 or 2");

// A CUtensorMap, opaque to the kernel (NVRTC has no toolkit headers).
struct alignas(64) TensorMap {
  u64 opaque[16];
};

__device__ __forceinline__ u32 dynamic_smem_bytes() {
  u32 r;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(r));
  return r;
}

// The ring's start in the dynamic shared memory: tensor copies want 128-byte aligned
// destinations, and the launchers add 128 bytes of slack for it.
__device__ __forceinline__ unsigned char* ring_start(unsigned char* dynamic_smem) {
  return dynamic_smem + ((128 - shared_address(dynamic_smem) % 128) % 128);
}

// As many stages of `stage_bytes` as the launcher's dynamic shared memory holds after
// the slack, at most kMaxStages.
__device__ __forceinline__ u32 ring_stage_count(u32 stage_bytes) {
  const u32 stages = (dynamic_smem_bytes() - 128) / stage_bytes;
  return stages > kMaxStages ? kMaxStages : stages;
}

__device__ __forceinline__ uint4 load_shared_16(u32 addr) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(addr));
  return v;
}

// --- The stage barriers: one mbarrier per ring slot, one phase per use of the slot. ---

__device__ __forceinline__ void barrier_init(u32 bar, u32 count) {
  asm volatile("mbarrier.init.shared.b64 [%0], %1;" :: "r"(bar), "r"(count) : "memory");
}

// Makes the initialised barriers visible to the copy engines and the other threads.
__device__ __forceinline__ void barrier_init_fence() {
#if STREAM_TMA
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
  __syncthreads();
}

__device__ __forceinline__ void barrier_wait(u32 bar, u32 parity) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile(
      "{\n\t.reg .pred done;\n"
      "WAIT:\n\t"
      "mbarrier.try_wait.parity.shared.b64 done, [%0], %1;\n\t"
      "@!done bra WAIT;\n\t}"
      :: "r"(bar), "r"(parity) : "memory");
#else
  asm volatile(
      "{\n\t.reg .pred done;\n"
      "WAIT:\n\t"
      "mbarrier.test_wait.parity.shared.b64 done, [%0], %1;\n\t"
      "@!done bra WAIT;\n\t}"
      :: "r"(bar), "r"(parity) : "memory");
#endif
}

// A plain arrive (release: this thread's reads of the slot are done).
__device__ __forceinline__ void barrier_arrive(u32 bar) {
  asm volatile("mbarrier.arrive.shared.b64 _, [%0];" :: "r"(bar) : "memory");
}

// The next ring slot, and the barrier phase it is waited on in: slot i % stages, phase
// (i / stages) % 2 of unit i, kept as counters because the loops' divisions by a runtime
// `stages` cost about 20 instructions a unit (docs/performance.md, item 109).
__device__ __forceinline__ void next_slot(u32& slot, u32& phase, u32 stages) {
  if (++slot == stages) {
    slot = 0;
    phase ^= 1;
  }
}

// Synchronises the first `threads` threads of the CTA on hardware barrier `id` (1..15;
// 0 is __syncthreads), leaving the others running.
__device__ __forceinline__ void named_barrier_sync(u32 id, u32 threads) {
  asm volatile("bar.sync %0, %1;" :: "r"(id), "r"(threads) : "memory");
}

#if STREAM_TMA
constexpr u32 kBarrierCount = 1;  // the producer's arrive, which also sets the bytes

// One box of a 2-D tensor map, at element coordinates (x along the row, y the row), to
// shared memory; completion is counted on `bar`.
__device__ __forceinline__ void tensor_copy(u32 dst, const TensorMap* map, u32 x, u32 y, u32 bar,
                                            u64 policy) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".L2::cache_hint [%0], [%1, {%2, %3}], [%4], %5;"
      :: "r"(dst), "l"(reinterpret_cast<u64>(map)), "r"(x), "r"(y), "r"(bar), "l"(policy)
      : "memory");
}

__device__ __forceinline__ void tensor_copy(u32 dst, const TensorMap* map, u32 x, u32 y, u32 bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
      "[%0], [%1, {%2, %3}], [%4];"
      :: "r"(dst), "l"(reinterpret_cast<u64>(map)), "r"(x), "r"(y), "r"(bar) : "memory");
}

__device__ __forceinline__ void barrier_expect(u32 bar, u32 bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;" :: "r"(bar), "r"(bytes) : "memory");
}
#else
constexpr u32 kBarrierCount = kThreads;  // every thread's cp.async arrival
#endif

__device__ __forceinline__ void copy_16(u32 dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(dst), "l"(src) : "memory");
}

// The barrier's pending count drops once this thread's earlier cp.async have landed.
__device__ __forceinline__ void barrier_arrive_copies(u32 bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];" :: "r"(bar) : "memory");
}

// The ring's first `stages` stages: the first `prefetch_stages` stages' weights go out
// before the wait for the preceding grid, the rest after it in stage order, each stage's
// weights then its activations. A stage completes only when its activations land, and
// the copy that brings them queues behind every weight box issued before it: with the
// whole ring ahead of the wait the compute warps start about one stage's time later per
// stage (docs/performance.md, items 101 and 102). That pays only where the wait is long,
// under a programmatic dependent launch; elsewhere the launchers pass 0
// (stream_ring_prefetch_stages).
template <typename IssueWeights, typename IssueActivations>
__device__ __forceinline__ void issue_first_stages(u32 stages, u32 prefetch_stages,
                                                   IssueWeights weights,
                                                   IssueActivations activations) {
  const u32 early = prefetch_stages < stages ? prefetch_stages : stages;
  for (u32 i = 0; i < early; ++i) weights(i);
  wait_for_preceding_grid();  // a programmatic dependent launch: the activations are ready
  for (u32 i = 0; i < early; ++i) activations(i);
  for (u32 i = early; i < stages; ++i) {
    weights(i);
    activations(i);
  }
}

// Where one lane reads its fragments inside its warp's part of a stage, fixed for the
// whole loop: weights of rows g and g+8 of the warp's slab (K half h: bytes 64h + 16t),
// and the two 16-byte halves of token 8*tg + g's activations 16t .. 16t+15 of K half 0
// (half 1 is 128 bytes on), token rows `token_pitch` bytes apart. Tokens past m read
// token m-1: their MMA columns are never stored.
//
// A quarter-warp of a 16-byte shared load is lanes g = 2j and 2j+1: rows 128 bytes
// apart, so the same banks at the same offset. Odd g therefore loads its weight halves in
// the other order (w[.][0] holds K half 1), which puts the two rows on disjoint banks, and
// its decode takes the words back from the other register through the prmt selectors
// (sel_lo, sel_hi): no instruction is added. Token rows of 256 bytes (one tensor copy)
// keep a 2-way conflict between tokens 2j and 2j+1; rows padded to 272 bytes avoid it but
// measured slower in w8a16_gemm_m16_streamk by cp.async and no faster by tensor copies of
// 136 K (docs/performance.md, item 98).
template <u32 kTokenGroups>
struct FragmentOffsets {
  u32 w[2][2];             // [g / g+8][load order]
  u32 x[kTokenGroups][2];  // [token group][first / second 8 k] of K half 0
  u32 sel_lo, sel_hi;      // decode selectors: the word of K half h is in w[.][h ^ (g & 1)]
};

template <u32 kTokenGroups>
__device__ __forceinline__ FragmentOffsets<kTokenGroups> fragment_offsets(u32 m, u32 g, u32 t,
                                                                          u32 token_pitch) {
  FragmentOffsets<kTokenGroups> f;
  const u32 odd = g & 1;
#pragma unroll
  for (u32 half = 0; half < 2; ++half)
#pragma unroll
    for (u32 h = 0; h < 2; ++h) f.w[half][h] = (8 * half + g) * kBlockK + 64 * (h ^ odd) + 16 * t;
#pragma unroll
  for (u32 tg = 0; tg < kTokenGroups; ++tg) {
    const u32 token = 8 * tg + g < m ? 8 * tg + g : m - 1;
    f.x[tg][0] = token * token_pitch + 32 * t;
    f.x[tg][1] = token * token_pitch + 32 * t + 16;
  }
  f.sel_lo = odd ? 0xD5C4u : 0x9180u;
  f.sel_hi = odd ? 0xF7E6u : 0xB3A2u;
  return f;
}

// The NaN codes of two words of one row (fp8x4_nan_flags); bit 7 of each byte is kept
// once, after the loop.
__device__ __forceinline__ void nan_accumulate(u32& acc, u32 w0, u32 w1) {
  acc |= fp8x4_nan_flags(w0) | fp8x4_nan_flags(w1);
}

// One warp's 16 rows x one 128-K block of a stage, read out of shared memory: its weight
// words and the activations of its token groups, at the offsets of fragment_offsets.
template <u32 kTokenGroups>
struct BlockWords {
  uint4 w[2][2];                // [g / g+8][load order: K half h ^ (g & 1)]
  uint4 x[2][kTokenGroups][2];  // [chunk][token group][first / second 8 k]
};

template <u32 kTokenGroups>
__device__ __forceinline__ void load_weights(uint4 (&w)[2][2],
                                             const FragmentOffsets<kTokenGroups>& f, u32 w_base) {
#pragma unroll
  for (u32 half = 0; half < 2; ++half)
#pragma unroll
    for (u32 h = 0; h < 2; ++h) w[half][h] = load_shared_16(w_base + f.w[half][h]);
}

// The activations of K half h.
template <u32 kTokenGroups>
__device__ __forceinline__ void load_activations(uint4 (&x)[kTokenGroups][2],
                                                 const FragmentOffsets<kTokenGroups>& f,
                                                 u32 x_base, u32 h) {
#pragma unroll
  for (u32 tg = 0; tg < kTokenGroups; ++tg)
#pragma unroll
    for (u32 p = 0; p < 2; ++p) x[tg][p] = load_shared_16(x_base + 128 * h + f.x[tg][p]);
}

template <u32 kTokenGroups>
__device__ __forceinline__ void load_block(BlockWords<kTokenGroups>& b,
                                           const FragmentOffsets<kTokenGroups>& f, u32 w_base,
                                           u32 x_base) {
  load_weights<kTokenGroups>(b.w, f, w_base);
#pragma unroll
  for (u32 h = 0; h < 2; ++h) load_activations<kTokenGroups>(b.x[h], f, x_base, h);
}

// The NaN codes of a block's weight words onto nan_bits (per row half g / g+8).
// Diagnostic defines (wrong results, for timing what a part costs): METRALE_DIAG_NO_NAN_CHECK
// skips the NaN codes' check, METRALE_DIAG_NO_DECODE feeds the weight words to the MMAs
// as they are.
__device__ __forceinline__ void nan_block(u32 (&nan_bits)[2], const uint4 (&w)[2][2]) {
#if !defined(METRALE_DIAG_NO_NAN_CHECK)
#pragma unroll
  for (u32 half = 0; half < 2; ++half)
#pragma unroll
    for (u32 h = 0; h < 2; ++h) {
      nan_accumulate(nan_bits[half], w[half][h].x, w[half][h].y);
      nan_accumulate(nan_bits[half], w[half][h].z, w[half][h].w);
    }
#else
  (void)nan_bits;
  (void)w;
#endif
}

// K half h of a block onto `part`: its weight words decoded (w, in load order) and its
// MMAs against the activations of that half (x: [token group][first / second 8 k]).
template <u32 kTokenGroups>
__device__ __forceinline__ void mma_half(float (&part)[kTokenGroups][4],
                                         const FragmentOffsets<kTokenGroups>& f,
                                         const uint4 (&w)[2][2], const uint4 (&x)[kTokenGroups][2],
                                         u32 h) {
  // K half h is this register for even g and the other one for odd g (see above).
  const uint4 lo = w[0][h], lo_other = w[0][h ^ 1];
  const uint4 hi = w[1][h], hi_other = w[1][h ^ 1];
  const u32 lo_words[4] = {lo.x, lo.y, lo.z, lo.w};
  const u32 lo_others[4] = {lo_other.x, lo_other.y, lo_other.z, lo_other.w};
  const u32 hi_words[4] = {hi.x, hi.y, hi.z, hi.w};
  const u32 hi_others[4] = {hi_other.x, hi_other.y, hi_other.z, hi_other.w};
#pragma unroll
  for (u32 q = 0; q < 4; ++q) {
    u32 a[4];
    // row g: slots 0,1 | 2,3, then row g+8
#if defined(METRALE_DIAG_NO_DECODE)
    (void)f;
    a[0] = lo_words[q]; a[2] = lo_others[q]; a[1] = hi_words[q]; a[3] = hi_others[q];
#else
    fp8x4_e4m3_to_bf16x2_pick(lo_words[q], lo_others[q], f.sel_lo, f.sel_hi, a[0], a[2]);
    fp8x4_e4m3_to_bf16x2_pick(hi_words[q], hi_others[q], f.sel_lo, f.sel_hi, a[1], a[3]);
#endif
#pragma unroll
    for (u32 tg = 0; tg < kTokenGroups; ++tg) {
      const uint4 xs = x[tg][q / 2];
      u32 bfrag[2];
      bfrag[0] = (q % 2 == 0) ? xs.x : xs.z;
      bfrag[1] = (q % 2 == 0) ? xs.y : xs.w;
      mma_m16n8k16_bf16(part[tg], a, bfrag);
    }
  }
}

// acc += scale * the block's partial (its kMmaChains chains added first).
template <u32 kTokenGroups>
__device__ __forceinline__ void fold_block(float (&acc)[kTokenGroups][4],
                                           const float (&part)[kMmaChains][kTokenGroups][4],
                                           float scale) {
#pragma unroll
  for (u32 tg = 0; tg < kTokenGroups; ++tg)
#pragma unroll
    for (u32 e = 0; e < 4; ++e) {
      acc[tg][e] = __fmaf_rn(scale, kMmaChains == 2 ? part[0][tg][e] + part[1][tg][e] : part[0][tg][e],
                             acc[tg][e]);
#if defined(METRALE_DEFECT_BF16_ACCUM)
      acc[tg][e] = bf16_to_f32(f32_to_bf16_rn(acc[tg][e]));
#endif
    }
}

// The block's partial onto `acc`, from its weight words w and the activations of each K
// half h, which activations(h) gives (already in registers, or loaded then).
template <u32 kTokenGroups, typename Activations>
__device__ __forceinline__ void mma_halves(float (&acc)[kTokenGroups][4], u32 (&nan_bits)[2],
                                           const FragmentOffsets<kTokenGroups>& f,
                                           const uint4 (&w)[2][2], Activations activations,
                                           float scale, bool fold) {
  // kMmaChains independent accumulators (one per K half when 2) shorten the chain of
  // dependent MMAs a unit waits on; they are added before the scale.
  float part[kMmaChains][kTokenGroups][4];
  set_zero(part);
  nan_block(nan_bits, w);
#pragma unroll
  for (u32 h = 0; h < 2; ++h) mma_half<kTokenGroups>(part[h % kMmaChains], f, w, activations(h), h);
  if (fold) fold_block<kTokenGroups>(acc, part, scale);
}

// The block's partial onto `acc`, from its words in registers.
template <u32 kTokenGroups>
__device__ __forceinline__ void mma_block(float (&acc)[kTokenGroups][4], u32 (&nan_bits)[2],
                                          const FragmentOffsets<kTokenGroups>& f,
                                          const BlockWords<kTokenGroups>& b, float scale,
                                          bool fold) {
  mma_halves<kTokenGroups>(
      acc, nan_bits, f, b.w,
      [&](u32 h) -> const uint4(&)[kTokenGroups][2] { return b.x[h]; }, scale, fold);
}

// One warp's 16 rows x one 128-K block of a stage: the block's partial onto `acc`. With
// kXByHalf each K half's activations are loaded just before its MMAs, so a block holds
// half of them in registers at a time (stream-K's 16-token build: 84 registers instead
// of 96, docs/performance.md, item 143).
template <u32 kTokenGroups, bool kXByHalf = false>
__device__ __forceinline__ void compute_block(float (&acc)[kTokenGroups][4], u32 (&nan_bits)[2],
                                              const FragmentOffsets<kTokenGroups>& f, u32 w_base,
                                              u32 x_base, float scale, bool fold) {
  BlockWords<kTokenGroups> b;
  load_weights<kTokenGroups>(b.w, f, w_base);
  if constexpr (!kXByHalf) {
#pragma unroll
    for (u32 h = 0; h < 2; ++h) load_activations<kTokenGroups>(b.x[h], f, x_base, h);
  }
  mma_halves<kTokenGroups>(
      acc, nan_bits, f, b.w,
      [&](u32 h) -> const uint4(&)[kTokenGroups][2] {
        if constexpr (kXByHalf) load_activations<kTokenGroups>(b.x[h], f, x_base, h);
        return b.x[h];
      },
      scale, fold);
}

}  // namespace
