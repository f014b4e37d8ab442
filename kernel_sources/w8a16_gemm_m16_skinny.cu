// w8a16_gemm_m16_skinny: the tensor-core W8A16 decode GEMM with a 16-row M tile for
// small layers (a few MiB of weights, e.g. DeepSeek-V3 q_a and kv_a), where the time is
// the latency of one round of loads rather than a stream.
//
//   y[i][j] = bf16_rn( sum_c P_c[i][j] ),  P_c = FP32 partial of the K chunk c
//
// Why: the tiled entries give a warp several 128-K blocks one after another, so a small
// layer waits on a few warps' chains of loads, decodes and MMAs, then on a reduction
// through a cluster. Here every warp gets one or two blocks of 16 weight rows
// x 128 K and requests them all at once straight into registers (16-byte loads,
// evict-first, K permuted inside every 64-wide chunk as in w8a16_gemm_m16.cu), and the
// many warps of every SM overlap one another's decode and MMAs. A CTA of W warps owns 16
// rows and a chunk of W x B K blocks (warp w takes blocks w, w + W, ... of the chunk); the
// warps' partials are added in warp order through shared memory. The third kernel,
// w8a16_gemm_m16_skinny_deep, takes a warp's B blocks one after another instead, B from
// the grid: on one chunk of K (one CTA per 16 rows, no partial through L2) it serves
// layers of tens of MiB.
//
// The chunks of a row group meet in chunk order (deterministic, no atomics): chunks 1..
// write their partial, one 64-bit word per output with a flag beside the FP32 bits
// (st.relaxed.gpu), into their slot of the caller's workspace and leave; chunk 0 loads
// the words, waits for each flag, adds the values in chunk order, clears the words and
// stores. A launch that completes leaves the workspace zero. Chunk 0 starts before the
// other chunks of its group (CTAs start in index order, x fastest) and only it waits, on
// CTAs that wait on nothing: two CTAs resident at a time suffice. With one chunk no
// workspace is touched. Launched as one cluster per row group (grid x = cluster x =
// chunks, 2..8, sm_90), the one- and two-block kernels hand their partials to chunk 0
// through its shared memory instead (remote stores, then the cluster barrier), and chunk
// 0 adds them in the same order: the same bits, no workspace touched. The L2 handoff
// costs 0.6-1.1 us a launch on kv_a (docs/performance.md, item 66).
//
// Launched as a programmatic dependent launch, a CTA requests its weights and scales
// while the preceding kernel still runs and waits for it before reading activations or
// touching outputs and workspace.
//
// Grid: (chunks, ceil(N/16), 1), ceil(N/32) rows for w8a16_gemm_m16_skinny_deep32
// Block: (32 W, 1, 1), W in 1..16; dynamic shared memory W x 8 TOKEN_GROUPS x 17 floats,
// plus (chunks - 1) x 256 floats in a cluster. chunks = ceil(K / (128 W B)), with B = 1
// (w8a16_gemm_m16_skinny), 2 (w8a16_gemm_m16_skinny2) or the caller's (the deep kernels)
// blocks per warp. m in 1..16, K a multiple of 128. Workspace: ceil(N/16) x (chunks - 1)
// slots of 256 words, one per 16-row group and chunk after the first. Built twice,
// TOKEN_GROUPS=1 for m <= 8 and 2 for m in 9..16, as w8a16_gemm_m16.cu (the 32-row deep
// kernel with TOKEN_GROUPS=2 only, which serves every m). Tuning defines
// (for `metrale bench --define`; docs/performance.md has what they measured):
// SKINNY_MMA_CHAINS, SKINNY_MIN_CTAS (the one-block kernel's launch-bounds minimum, which
// caps its registers), SKINNY_CHUNKS_IN_FLIGHT (the words chunk 0 polls together),
// SKINNY_DEEP_BUFFERS, SKINNY_DEEP_MAX_THREADS and SKINNY_DEEP_MIN_CTAS (the deep kernel's
// blocks in flight per warp and launch bounds), SKINNY_DEEP_L2_FILL (its loads' L2 fill),
// SKINNY_DEEP_CLAMP (its loads clamped to the last row and token, not predicated),
// SKINNY_DEEP_CURSOR (its clamped loop on stepped pointers),
// SKINNY_DEEP_X_BY_HALF (its 16-token build's activations loaded per 64-K half),
// SKINNY_DEEP_M8_NAN_FLAGS and SKINNY_NAN_FLAGS (the NaN check of the deep kernels' 8-token
// build and of the chunked kernels);
// the diagnostic define METRALE_DIAG_PACKED_ADDRESSES reads each 16-row x 128-K block's
// bytes as if they were contiguous (wrong results: what a packed layout would stream).
#include "metrale_device.cuh"

namespace {

constexpr u32 kBlockK = 128;
constexpr u32 kRedStride = 17;  // padded token row (16 rows) of the reduction buffer
constexpr u32 kSlotWords = 16 * 16;  // a CTA's partial: 16 tokens x 16 rows
constexpr u64 kPartialFlag = u64{1} << 32;
#ifndef SKINNY_CHUNKS_IN_FLIGHT
#define SKINNY_CHUNKS_IN_FLIGHT 8
#endif
constexpr u32 kMaxChunksInFlight = SKINNY_CHUNKS_IN_FLIGHT;
// Independent MMA chains per block (one per 64-K half, added before the scale), as
// M16_MMA_CHAINS in w8a16_gemm_m16.cu. Measured on an H200 (docs/performance.md): one
// chain took 0.95-0.99x the time of two at 12 and 16 tokens on four small layers, and up
// to 8 tokens 0.98-0.99x except on kv_a (1.01-1.04x), hence 2 for TOKEN_GROUPS=1 only.
#ifndef SKINNY_MMA_CHAINS
#if TOKEN_GROUPS == 1
#define SKINNY_MMA_CHAINS 2
#else
#define SKINNY_MMA_CHAINS 1
#endif
#endif
constexpr u32 kMmaChains = SKINNY_MMA_CHAINS;
#ifndef SKINNY_MIN_CTAS
#define SKINNY_MIN_CTAS 1
#endif
// The deep kernel's launch bounds: at most SKINNY_DEEP_MAX_THREADS threads per CTA, at
// least SKINNY_DEEP_MIN_CTAS CTAs per SM (512 and 2 cap its registers at 64; 256 and 3 at
// 80, for CTAs of up to 8 warps).
#ifndef SKINNY_DEEP_MAX_THREADS
#define SKINNY_DEEP_MAX_THREADS 512
#endif
#ifndef SKINNY_DEEP_MIN_CTAS
#define SKINNY_DEEP_MIN_CTAS 1
#endif

// The NaN check of the 16-row deep kernels: fp8x4_nan_flags, two operations per word
// where fp8x4_nan_bits takes three. Uncapped, the flags raise the 8-token build from 62 to
// 68 registers (ptxas of CUDA 13.0), over the 64 that its CTAs per SM assume
// (W8A16_GEMM_M16_SKINNY_DEEP_REGISTERS_M8), so that build takes them under a cap of 64:
// launch bounds of 2 CTAs of 512 threads per SM (4 of 256 for the three-per-SM form),
// 64 registers with SKINNY_DEEP_CLAMP's loads (58 without), no spill.
// SKINNY_DEEP_M8_NAN_FLAGS=0 (a tuning point) keeps the 8-token build on the masked add,
// uncapped (docs/performance.md, item 104).
#ifndef SKINNY_DEEP_M8_NAN_FLAGS
#define SKINNY_DEEP_M8_NAN_FLAGS 1
#endif
// This build takes the flags under the cap of 64.
#define SKINNY_DEEP_M8_CAPPED (TOKEN_GROUPS == 1 && SKINNY_DEEP_M8_NAN_FLAGS)

// The 16-token build of the 16-row deep kernels loads each 64-K half's activations just
// before its MMAs, so one half's are live at a time: the 80-register form then holds no
// spill and took 0.86-0.99x the time (median 0.92-0.95), the others 0.98-1.02x
// (docs/performance.md, item 85). The 8-token build keeps the whole block's: by half, its
// 80-register form rises from 62 to 72 registers. SKINNY_DEEP_X_BY_HALF=0 / 1 (a tuning
// point) sets it for the 16-token build.
#if TOKEN_GROUPS == 1
#undef SKINNY_DEEP_X_BY_HALF
#define SKINNY_DEEP_X_BY_HALF 0
#elif !defined(SKINNY_DEEP_X_BY_HALF)
#define SKINNY_DEEP_X_BY_HALF 1
#endif

#if TOKEN_GROUPS == 1 || TOKEN_GROUPS == 2
constexpr u32 kTokenGroups = TOKEN_GROUPS;
#else
#error "build with TOKEN_GROUPS=1 (m <= 8) or TOKEN_GROUPS=2 (m in 9..16)"
#endif
constexpr u32 kTokens = 8 * kTokenGroups;

__device__ __forceinline__ void store_flagged(u64* at, u64 v) {
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" :: "l"(at), "l"(v) : "memory");
}

__device__ __forceinline__ u64 load_flagged(const u64* at) {
  u64 v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(at) : "memory");
  return v;
}

// What one lane holds of one block: rows g and g + 8 of each of the warp's 16-row groups
// (one, or two in w8a16_gemm_m16_skinny_deep32), 64-K halves h = 0, 1.
template <u32 kRowGroups>
struct WarpBlock {
  uint4 w[kRowGroups][2][2];  // [row group][row g / g+8][half]
  uint4 x[2][kTokenGroups][2];  // [half][token group][first / second 8 k] of token 8 tg + g
  float scale;
};

// kFill256: the loads ask L2 for the aligned 256 bytes around each miss (the deep kernels,
// whose warps w and w ^ 1 read blocks 2i and 2i + 1 of the same rows together).
// kClamp: a row past N reads row N - 1 instead of zeros (see SKINNY_DEEP_CLAMP).
template <u32 kRowGroups, bool kFill256 = false, bool kClamp = false>
__device__ __forceinline__ void load_weights(WarpBlock<kRowGroups>& blk, const Operands& op,
                                             u32 row0, u32 b, u64 policy, u32 g, u32 t) {
#pragma unroll
  for (u32 r = 0; r < kRowGroups; ++r)
#pragma unroll
  for (u32 half = 0; half < 2; ++half) {
    const u32 row = kClamp ? min(row0 + 16 * r + g + 8 * half, op.n - 1)
                           : row0 + 16 * r + g + 8 * half;
#pragma unroll
    for (u32 h = 0; h < 2; ++h) {
#if defined(METRALE_DIAG_PACKED_ADDRESSES)
      // Diagnostic (wrong results): the same bytes read as if each 16-row x 128-K block
      // were 2 KiB of its own, its rows one after another (a packed layout).
      const u8* p = op.weight + static_cast<u64>(row / 16) * op.k * 16 + b * 2048 +
                    (row % 16) * kBlockK + 64 * h + 16 * t;
#else
      const u8* p = op.weight + static_cast<u64>(row) * op.k + b * kBlockK + 64 * h + 16 * t;
#endif
      blk.w[r][half][h] = kClamp || row < op.n ? load_stream_16<kFill256>(p, policy)
                                               : make_uint4(0, 0, 0, 0);
    }
  }
  blk.scale = op.block_scale[static_cast<u64>(row0 / kBlockK) * (op.k / kBlockK) + b];
}

// Token `token`'s activations 16t .. 16t + 15 of 64-K half h of block b (zero past m, or
// with kClamp token m - 1's).
template <bool kClamp = false>
__device__ __forceinline__ void load_token_half(uint4 (&x)[2], const Operands& op, u32 token, u32 b,
                                                u32 h, u32 t) {
  if (kClamp) token = min(token, op.m - 1);
  if (kClamp || token < op.m) {
    const u16* src =
        op.input + static_cast<u64>(token) * op.a_row_stride + b * kBlockK + 64 * h + 16 * t;
    x[0] = load_shared_ro_16(src);
    x[1] = load_shared_ro_16(src + 8);
  } else {
    x[0] = x[1] = make_uint4(0, 0, 0, 0);
  }
}

template <u32 kRowGroups, bool kClamp = false>
__device__ __forceinline__ void load_activations(WarpBlock<kRowGroups>& blk, const Operands& op, u32 b, u32 g,
                                                 u32 t) {
#pragma unroll
  for (u32 tg = 0; tg < kTokenGroups; ++tg)
#pragma unroll
    for (u32 h = 0; h < 2; ++h) load_token_half<kClamp>(blk.x[h][tg], op, 8 * tg + g, b, h, t);
}

// acc += scale * part, the chains of the block's MMAs added first.
__device__ __forceinline__ void add_scaled(float (&acc)[kTokenGroups][4],
                                           const float (&part)[kMmaChains][kTokenGroups][4],
                                           float scale) {
#pragma unroll
  for (u32 tg = 0; tg < kTokenGroups; ++tg)
#pragma unroll
    for (u32 e = 0; e < 4; ++e) acc[tg][e] = __fmaf_rn(
          scale, kMmaChains == 2 ? part[0][tg][e] + part[1][tg][e] : part[0][tg][e], acc[tg][e]);
}

// acc += scale * (this block's partial); one MMA chain per 64-K half.
template <u32 kRowGroups, bool kNanFlags = false>
__device__ __forceinline__ void block_mma(float (&acc)[kRowGroups][kTokenGroups][4],
                                          u32 (&nan_bits)[kRowGroups][2],
                                          const WarpBlock<kRowGroups>& blk) {
#pragma unroll
  for (u32 r = 0; r < kRowGroups; ++r) {
    float part[kMmaChains][kTokenGroups][4];
    set_zero(part);
#pragma unroll
    for (u32 h = 0; h < 2; ++h) {
      mma_half_block<kTokenGroups, kNanFlags>(part[h % kMmaChains], nan_bits[r], blk.w[r][0][h],
                                              blk.w[r][1][h], blk.x[h]);
    }
    add_scaled(acc[r], part, blk.scale);
  }
}

// acc += scale * (this block's partial), each 64-K half's activations loaded just before
// its MMAs: load_x(x, tg, h) loads token group tg's of half h.
template <u32 kRowGroups, bool kNanFlags, typename LoadX>
__device__ __forceinline__ void block_mma_x_by_half(float (&acc)[kRowGroups][kTokenGroups][4],
                                                    u32 (&nan_bits)[kRowGroups][2],
                                                    const WarpBlock<kRowGroups>& blk,
                                                    LoadX load_x) {
  static_assert(kRowGroups == 1, "one 16-row group");
  float part[kMmaChains][kTokenGroups][4];
  set_zero(part);
#pragma unroll
  for (u32 h = 0; h < 2; ++h) {
    uint4 x[kTokenGroups][2];
#pragma unroll
    for (u32 tg = 0; tg < kTokenGroups; ++tg) load_x(x[tg], tg, h);
    mma_half_block<kTokenGroups, kNanFlags>(part[h % kMmaChains], nan_bits[0], blk.w[0][0][h],
                                            blk.w[0][1][h], x);
  }
  add_scaled(acc[0], part, blk.scale);
}

// Chunk 0: sum += the partials of chunks 1..chunks-1 of this output, in chunk order, each
// waited for, then cleared. The words of up to kMaxChunksInFlight chunks are polled
// together, every one still unflagged reloaded in each round: chunk 0 usually gets here
// first, and the others' words land close together, so polling them one after another
// would cost a round trip to L2 per chunk.
__device__ __forceinline__ float add_chunks(u64* slots, u32 chunks, float sum) {
#pragma unroll 1
  for (u32 c0 = 1; c0 < chunks; c0 += kMaxChunksInFlight) {
    u64 words[kMaxChunksInFlight];
    u32 pending = 0;
#pragma unroll
    for (u32 j = 0; j < kMaxChunksInFlight; ++j) {
      words[j] = 0;
      if (c0 + j < chunks) pending |= 1u << j;
    }
    while (pending != 0) {
#pragma unroll
      for (u32 j = 0; j < kMaxChunksInFlight; ++j) {
        if (pending & (1u << j)) words[j] = load_flagged(slots + static_cast<u64>(c0 + j - 1) * kSlotWords);
      }
#pragma unroll
      for (u32 j = 0; j < kMaxChunksInFlight; ++j) {
        if (words[j] & kPartialFlag) pending &= ~(1u << j);
      }
    }
#pragma unroll
    for (u32 j = 0; j < kMaxChunksInFlight; ++j) {
      if (c0 + j < chunks) {
        sum += __uint_as_float(static_cast<u32>(words[j]));
        store_flagged(slots + static_cast<u64>(c0 + j - 1) * kSlotWords, 0);
      }
    }
  }
  return sum;
}

// The warp's blocks all at once (B = kWarpBlocks): blocks first + j stride below K.
template <u32 kWarpBlocks, bool kNanFlags>
__device__ __forceinline__ void stream_at_once(float (&acc)[1][kTokenGroups][4], u32 (&nan_bits)[1][2],
                                               const Operands& op, u32 row0, u32 first,
                                               u32 k_blocks, u32 stride, u64 policy, u32 g,
                                               u32 t) {
  // Warps past K skip the stream and only arrive at the reduction. Each step tests the
  // warp once, not each block: a predicate per block holds registers for both paths.
  const bool streams = first < k_blocks;
  WarpBlock<1> blk[kWarpBlocks];
  if (streams) {
#pragma unroll
    for (u32 j = 0; j < kWarpBlocks; ++j) {
      const u32 b = first + j * stride;
      if (j == 0 || b < k_blocks) load_weights(blk[j], op, row0, b, policy, g, t);
    }
  }
  wait_for_preceding_grid();
  if (streams) {
#pragma unroll
    for (u32 j = 0; j < kWarpBlocks; ++j) {
      const u32 b = first + j * stride;
      if (j == 0 || b < k_blocks) load_activations(blk[j], op, b, g, t);
    }
#pragma unroll
    for (u32 j = 0; j < kWarpBlocks; ++j) {
      const u32 b = first + j * stride;
      if (j == 0 || b < k_blocks) block_mma<1, kNanFlags>(acc, nan_bits, blk[j]);
    }
  }
}

// The deep form: a warp takes its B blocks one after another, with kDeepBuffers of them in
// flight (the weights of block j + kDeepBuffers requested as soon as block j's MMAs have
// read its registers). One CTA per 16 rows covering all of K leaves no partial to hand
// through L2, for layers of tens of MiB. Measured on an H200 (docs/performance.md, item
// 58): one buffer took 0.73-1.05x the time of two (62 against 84 registers, so more warps
// per SM), hence 1.
#ifndef SKINNY_DEEP_BUFFERS
#define SKINNY_DEEP_BUFFERS 1
#endif
// Its warps take blocks w, w + W, ...: warps w and w ^ 1 read the two 128-byte halves of
// the same 256 bytes of each row at about the same time, so its loads ask L2 to fill 256
// bytes at once (docs/performance.md, item 81). SKINNY_DEEP_L2_FILL=0 (a tuning point)
// asks for 128.
#ifndef SKINNY_DEEP_L2_FILL
#define SKINNY_DEEP_L2_FILL 1
#endif
// The 16-row deep kernel's loads are clamped, not predicated: a row past N reads row N - 1
// and a token past m token m - 1. Their products land in MMA rows and columns of outputs
// that are never stored (each output depends on its own row and token alone, NaN check
// included), and the loads need no predicate, no registers zeroed before each one and no
// parameters reloaded for the predicated path. Measured on an H100 (docs/performance.md,
// item 192): 0.88-1.01x the time (median 0.986) on the 16-row deep kernel and 0.96-1.00x
// on its three-per-SM form's 8-token build, but 1.00-1.05x (median 1.01) on that form's
// 16-token build (80 registers) and on the 32-row form, which keep the predicated loads,
// as the chunked kernels do (0.97-1.02x there). SKINNY_DEEP_CLAMP=0 (a tuning point)
// predicates them all.
#ifndef SKINNY_DEEP_CLAMP
#define SKINNY_DEEP_CLAMP 1
#endif

// The clamped deep loop of the 8-token build steps pointers instead of recomputing each
// block's addresses: one per lane row and token, a block of the warp's stride further each
// step (ptxas of CUDA 13.0: 188 against 196 instructions a block, 202 against 222 in the
// 16-token build, the same registers). Measured on an H100 (docs/performance.md, item
// 194): at one and 8 tokens the deep forms on 4 and 8 warps and the three-per-SM form
// took 0.93-1.00x the time (medians 0.95-0.99), at 16 tokens 0.97-1.05x (medians
// 0.99-1.01; 16 warps on DeepSeek-V3 q_b and Llama-3-8B gate_up 1.03-1.04x), hence every
// CTA of the 8-token build and, in the 16-token build, CTAs of fewer than 16 warps only (a
// branch on the warps: above 8 tokens medians 0.974-0.996x the time on 2-8 warps, 1.004x
// on 16, on an H100, item 195): SKINNY_DEEP_CURSOR=2, the default. 0 / 1 (tuning points)
// recompute / step in both builds on every CTA.
#ifndef SKINNY_DEEP_CURSOR
#define SKINNY_DEEP_CURSOR 2
#endif

template <u32 kRowGroups>
struct DeepCursor {
  const u8* w[kRowGroups][2];  // rows g and g + 8 of each row group, lane offset 16t
  const float* scale;
  const u16* x[kTokenGroups];  // tokens g and 8 + g, lane offset 16t
};

// Rows past N read row N - 1, tokens past m token m - 1 (SKINNY_DEEP_CLAMP).
template <u32 kRowGroups>
__device__ __forceinline__ DeepCursor<kRowGroups> deep_cursor(const Operands& op, u32 row0, u32 b,
                                                              u32 g, u32 t) {
  DeepCursor<kRowGroups> c;
#pragma unroll
  for (u32 r = 0; r < kRowGroups; ++r)
#pragma unroll
    for (u32 half = 0; half < 2; ++half) {
      const u32 row = min(row0 + 16 * r + g + 8 * half, op.n - 1);
      c.w[r][half] = op.weight + static_cast<u64>(row) * op.k + b * kBlockK + 16 * t;
    }
  c.scale = op.block_scale + static_cast<u64>(row0 / kBlockK) * (op.k / kBlockK) + b;
#pragma unroll
  for (u32 tg = 0; tg < kTokenGroups; ++tg) {
    const u32 token = min(8 * tg + g, op.m - 1);
    c.x[tg] = op.input + static_cast<u64>(token) * op.a_row_stride + b * kBlockK + 16 * t;
  }
  return c;
}

// The weights and scale of the cursor's block, then the cursor `stride` blocks on.
// kOrdered: coherent loads, which stay ahead of griddepcontrol.wait (load_stream_16).
template <u32 kRowGroups, bool kFill256, bool kOrdered = false>
__device__ __forceinline__ void load_weights_step(WarpBlock<kRowGroups>& blk,
                                                  DeepCursor<kRowGroups>& c, u32 stride,
                                                  u64 policy) {
#pragma unroll
  for (u32 r = 0; r < kRowGroups; ++r)
#pragma unroll
    for (u32 half = 0; half < 2; ++half) {
#pragma unroll
      for (u32 h = 0; h < 2; ++h) {
        blk.w[r][half][h] = load_stream_16<kFill256, kOrdered>(c.w[r][half] + 64 * h, policy);
      }
      c.w[r][half] += stride * kBlockK;
    }
  if constexpr (kOrdered) {
    asm volatile("ld.global.f32 %0, [%1];" : "=f"(blk.scale) : "l"(c.scale));
  } else {
    blk.scale = __ldg(c.scale);
  }
  c.scale += stride;
}

// Token group tg's activations of 64-K half h at the cursor's block.
template <u32 kRowGroups>
__device__ __forceinline__ void load_token_half_at(uint4 (&x)[2], const DeepCursor<kRowGroups>& c,
                                                   u32 tg, u32 h) {
  const u16* src = c.x[tg] + 64 * h;
  x[0] = load_shared_ro_16(src);
  x[1] = load_shared_ro_16(src + 8);
}

template <u32 kRowGroups>
__device__ __forceinline__ void step_tokens(DeepCursor<kRowGroups>& c, u32 stride) {
#pragma unroll
  for (u32 tg = 0; tg < kTokenGroups; ++tg) c.x[tg] += stride * kBlockK;
}

// The deep form's block loop: a warp's `count` blocks, first + j stride for j < count, one
// after another, kDeepBuffers of them in flight. load(blk, b, ahead) requests block b's
// weights and scale (ahead: before the wait for the preceding grid); run(blk, j, b) loads
// the warp's block j, block b, activations and adds its MMAs, after the wait. Block j's
// registers are refilled with block j + kDeepBuffers's weights as soon as its MMAs have
// read them.
template <u32 kRowGroups, typename Load, typename Run>
__device__ __forceinline__ void deep_blocks(u32 count, u32 first, u32 stride, Load load, Run run) {
  constexpr u32 kDeepBuffers = SKINNY_DEEP_BUFFERS;
  WarpBlock<kRowGroups> buf[kDeepBuffers];
#pragma unroll
  for (u32 s = 0; s < kDeepBuffers; ++s) {
    if (s < count) load(buf[s], first + s * stride, true);
  }
  wait_for_preceding_grid();
#pragma unroll 1
  for (u32 j0 = 0; j0 < count; j0 += kDeepBuffers) {
#pragma unroll
    for (u32 s = 0; s < kDeepBuffers; ++s) {
      const u32 j = j0 + s;
      if (j < count) {
        const u32 b = first + j * stride;
        run(buf[s], j, b);
        if (j + kDeepBuffers < count) load(buf[s], b + kDeepBuffers * stride, false);
      }
    }
  }
}

// acc += the block's MMAs, its activations loaded by load_x(x, tg, h) (token group tg's of
// 64-K half h): per half just before that half's MMAs (SKINNY_DEEP_X_BY_HALF, one row
// group), else all of them first.
template <u32 kRowGroups, bool kNanFlags, typename LoadX>
__device__ __forceinline__ void deep_block_mma(float (&acc)[kRowGroups][kTokenGroups][4],
                                               u32 (&nan_bits)[kRowGroups][2],
                                               WarpBlock<kRowGroups>& blk, LoadX load_x) {
  if constexpr (kRowGroups == 1 && SKINNY_DEEP_X_BY_HALF) {
    block_mma_x_by_half<kRowGroups, kNanFlags>(acc, nan_bits, blk, load_x);
  } else {
#pragma unroll
    for (u32 tg = 0; tg < kTokenGroups; ++tg)
#pragma unroll
      for (u32 h = 0; h < 2; ++h) load_x(blk.x[h][tg], tg, h);
    block_mma<kRowGroups, kNanFlags>(acc, nan_bits, blk);
  }
}

// The deep loop on stepped pointers: the weights' cursor runs kDeepBuffers blocks ahead
// of the activations'. The loads ahead of the wait are coherent: with .nc ones ptxas 13.0
// scheduled griddepcontrol.wait above them, which took the weights' head start under PDL
// away (1.05-1.20x the time with PDL).
template <u32 kRowGroups, bool kNanFlags>
__device__ __forceinline__ void stream_deep_stepped(float (&acc)[kRowGroups][kTokenGroups][4],
                                                    u32 (&nan_bits)[kRowGroups][2],
                                                    const Operands& op, u32 row0, u32 first,
                                                    u32 count, u32 stride, u64 policy, u32 g,
                                                    u32 t) {
  constexpr bool kDeepFill256 = SKINNY_DEEP_L2_FILL != 0;
  DeepCursor<kRowGroups> wc = deep_cursor<kRowGroups>(op, row0, first, g, t);
  DeepCursor<kRowGroups> xc = wc;
  deep_blocks<kRowGroups>(
      count, first, stride,
      [&](WarpBlock<kRowGroups>& blk, u32, bool ahead) {
        if (ahead) {
          load_weights_step<kRowGroups, kDeepFill256, true>(blk, wc, stride, policy);
        } else {
          load_weights_step<kRowGroups, kDeepFill256>(blk, wc, stride, policy);
        }
      },
      [&](WarpBlock<kRowGroups>& blk, u32, u32) {
        deep_block_mma<kRowGroups, kNanFlags>(
            acc, nan_bits, blk,
            [&](uint4(&x)[2], u32 tg, u32 h) { load_token_half_at(x, xc, tg, h); });
        step_tokens(xc, stride);
      });
}

template <u32 kRowGroups, bool kNanFlags, bool kClamp>
__device__ __forceinline__ void stream_deep(float (&acc)[kRowGroups][kTokenGroups][4],
                                            u32 (&nan_bits)[kRowGroups][2],
                                            const Operands& op, u32 row0, u32 first,
                                            u32 warp_blocks, u32 k_blocks, u32 stride,
                                            u64 policy, u32 g, u32 t) {
  // This warp's blocks: first + j stride for j < warp_blocks, below K.
  const u32 count =
      first < k_blocks ? min(warp_blocks, (k_blocks - first + stride - 1) / stride) : 0;
  // The diagnostic modes below address blocks their own way: they keep the recomputed form.
#if SKINNY_DEEP_CURSOR && !defined(METRALE_DIAG_X_FIRST_BLOCK_ONLY) && \
    !defined(METRALE_DIAG_X_BLOCK_ZERO) && !defined(METRALE_DIAG_PACKED_ADDRESSES)
  if constexpr (kClamp) {
    // SKINNY_DEEP_CURSOR=2: the 16-token build steps its pointers below 16 warps only.
    if (SKINNY_DEEP_CURSOR != 2 || kTokenGroups == 1 || stride < 16) {
      stream_deep_stepped<kRowGroups, kNanFlags>(acc, nan_bits, op, row0, first, count, stride,
                                                 policy, g, t);
      return;
    }
  }
#endif
  constexpr bool kDeepFill256 = SKINNY_DEEP_L2_FILL != 0;
  deep_blocks<kRowGroups>(
      count, first, stride,
      [&](WarpBlock<kRowGroups>& blk, u32 b, bool) {
        load_weights<kRowGroups, kDeepFill256, kClamp>(blk, op, row0, b, policy, g, t);
      },
      [&](WarpBlock<kRowGroups>& blk, u32 j, u32 b) {
#if defined(METRALE_DIAG_X_FIRST_BLOCK_ONLY)
        // Diagnostic (wrong results): the first block's activations serve every block.
        if (j == 0) load_activations<kRowGroups, kClamp>(blk, op, b, g, t);
        else blk.x[0][0][0].x ^= j;  // keeps the block's MMAs from being merged away
        block_mma<kRowGroups, kNanFlags>(acc, nan_bits, blk);
#elif defined(METRALE_DIAG_X_BLOCK_ZERO)
        // Diagnostic (wrong results): every warp reads block 0's activations, which stay
        // in L1: the activations' latency without their L2 traffic.
        (void)j, (void)b;
        load_activations<kRowGroups, kClamp>(blk, op, 0, g, t);
        block_mma<kRowGroups, kNanFlags>(acc, nan_bits, blk);
#else
        deep_block_mma<kRowGroups, kNanFlags>(
            acc, nan_bits, blk, [&](uint4(&x)[2], u32 tg, u32 h) {
              load_token_half<kClamp>(x, op, 8 * tg + g, b, h, t);
            });
#endif
      });
}

// The CTA's partial of output idx (token idx / 16, row idx % 16): its warps' values in
// the reduction buffer, added in warp order.
__device__ __forceinline__ float cta_partial(const float* red, u32 warps, u32 idx) {
  float sum = 0.0f;
#pragma unroll 8
  for (u32 w = 0; w < warps; ++w) sum += red[(w * kTokens + idx / 16) * kRedStride + idx % 16];
  return sum;
}

__device__ __forceinline__ void store_output(const Operands& op, u32 row0, u32 idx, float sum) {
  const u32 row = row0 + idx % 16;
  if (row < op.n) op.output[static_cast<u64>(idx / 16) * op.c_row_stride + row] = f32_to_bf16_rn(sum);
}

// kWarpBlocks = B blocks per warp requested at once, or 0: the deep form, with B from the
// grid, ceil(K blocks / (chunks x W)). kRowGroups: the CTA's 16-row groups, every warp on
// all of them (2 only in the deep form). kNanFlags: mma_half_block's NaN check. kClamp: the
// deep form's loads clamped to row N - 1 and token m - 1 (SKINNY_DEEP_CLAMP).
template <u32 kWarpBlocks, u32 kRowGroups, bool kNanFlags, bool kClamp>
__device__ __forceinline__ void gemm_skinny(const Operands& op, u64* partials) {
  static_assert(kRowGroups == 1 || (kRowGroups == 2 && kWarpBlocks == 0),
                "two row groups: deep form only");
  extern __shared__ float red[];  // [warp][token][row], token rows padded to kRedStride
  const u32 warps = blockDim.x / 32;
  const u32 warp = threadIdx.x / 32;
  const u32 lane = threadIdx.x % 32;
  const u32 g = lane / 4;
  const u32 t = lane % 4;
  const u32 chunk = blockIdx.x;
  const u32 chunks = gridDim.x;
  const u32 row0 = blockIdx.y * 16 * kRowGroups;
  const u32 k_blocks = op.k / kBlockK;
  const u32 warp_blocks =
      kWarpBlocks != 0 ? kWarpBlocks : (k_blocks + chunks * warps - 1) / (chunks * warps);
  // Warp w takes blocks first, first + W, ... of its chunk: at each step the CTA reads W
  // adjacent 128-byte pieces of each of its 16 rows.
  const u32 first = chunk * warps * warp_blocks + warp;
  const u64 policy = l2_evict_first_policy();
  // Launched as a cluster of the row group's chunks (sm_90), the chunks hand their
  // partials to chunk 0 through its shared memory. The first barrier phase, arrived at
  // here and waited for before the first remote write, makes sure every CTA of the
  // cluster has started. Not in the deep kernel, which the plan runs on one chunk: the
  // barriers' code costs it registers on its streaming path (62 -> 80 with NVRTC 13.0).
  const bool clustered = kWarpBlocks != 0 && chunks > 1 && cluster_size() == chunks;
  if (clustered) cluster_arrive_relaxed();

  float acc[kRowGroups][kTokenGroups][4];
  set_zero(acc);
  u32 nan_bits[kRowGroups][2] = {};
  if constexpr (kWarpBlocks == 0) {
    stream_deep<kRowGroups, kNanFlags, kClamp>(acc, nan_bits, op, row0, first, warp_blocks,
                                               k_blocks, warps, policy, g, t);
  } else {
    stream_at_once<kWarpBlocks, kNanFlags>(acc, nan_bits, op, row0, first, k_blocks, warps, policy,
                                           g, t);
  }

#pragma unroll
  for (u32 r = 0; r < kRowGroups; ++r) {
    // A row group wholly past N has no outputs and no workspace slot (one test for the CTA).
    if (r > 0 && row0 + 16 * r >= op.n) break;
    poison_nan_columns<kTokenGroups>(acc[r], nan_bits[r]);
    if (r > 0) __syncthreads();  // the previous row group's reads of the buffer are done
    // C fragment element e: row g + 8 (e / 2), token 8 tg + 2t + (e % 2).
#pragma unroll
    for (u32 tg = 0; tg < kTokenGroups; ++tg)
#pragma unroll
      for (u32 e = 0; e < 4; ++e) {
        const u32 token = 8 * tg + 2 * t + (e % 2);
        red[(warp * kTokens + token) * kRedStride + g + 8 * (e / 2)] = acc[r][tg][e];
      }
    __syncthreads();

    if (clustered) {
      // Chunk 0's: the other chunks' partials, [chunk - 1][token][row].
      float* const handed = red + warps * kTokens * kRedStride;
      cluster_wait();
      if (chunk != 0) {
        for (u32 idx = threadIdx.x; idx < 16 * op.m; idx += blockDim.x) {
          store_cluster_f32(&handed[(chunk - 1) * kSlotWords + idx], 0, cta_partial(red, warps, idx));
        }
        cluster_arrive_release();
        return;
      }
      cluster_arrive_relaxed();
      cluster_wait();
      for (u32 idx = threadIdx.x; idx < 16 * op.m; idx += blockDim.x) {
        float sum = cta_partial(red, warps, idx);
        // In chunk order, as the handoff through L2 below: the same sum.
        for (u32 c = 1; c < chunks; ++c) sum += handed[(c - 1) * kSlotWords + idx];
        store_output(op, row0, idx, sum);
      }
      return;
    }

    // Thread (token, row): outputs of the CTA's partial, token-major.
    const u32 group = blockIdx.y * kRowGroups + r;
    u64* const slots = partials + static_cast<u64>(group) * (chunks - 1) * kSlotWords;
    for (u32 idx = threadIdx.x; idx < 16 * op.m; idx += blockDim.x) {
      float sum = cta_partial(red, warps, idx);
      if (chunk != 0) {
        store_flagged(slots + static_cast<u64>(chunk - 1) * kSlotWords + idx,
                      kPartialFlag | __float_as_uint(sum));
        continue;
      }
#if defined(METRALE_DIAG_NO_HANDOFF)
      // Diagnostic (wrong results): chunk 0 stores its own partial without waiting for the
      // others', which still write theirs: what the handoff through L2 costs a launch.
      (void)add_chunks;
#else
      if (chunks > 1) sum = add_chunks(slots + idx, chunks, sum);
#endif
      store_output(op, row0 + 16 * r, idx, sum);
    }
  }
}

}  // namespace

// One kernel per blocks-per-warp form: the registers of a second block would halve the
// CTAs an SM holds for the one-block form.
#define SKINNY_KERNEL(name, warp_blocks, row_groups, max_threads, min_ctas, nan_flags, clamp)   \
  extern "C" __global__ void __launch_bounds__(max_threads, min_ctas)                           \
  name(const u16* __restrict__ input, const u8* __restrict__ weight,                            \
       const float* __restrict__ block_scale, u16* __restrict__ output, u32 m, u32 n, u32 k,    \
       u32 a_row_stride, u32 c_row_stride, u64* __restrict__ partials) {                        \
    /* The next kernel of the stream may launch once every CTA of this one has started. */     \
    allow_dependent_grid();                                                                     \
    gemm_skinny<warp_blocks, row_groups, nan_flags, clamp>(                                     \
        Operands{input, weight, block_scale, output, m, n, k, a_row_stride, c_row_stride},      \
        partials);                                                                              \
  }

// SKINNY_KERNELS picks the kernels a module holds, as a bit set: 1 the chunked ones, 2
// the deep ones, 4 the deep kernel on 32 rows; the default, 7, all five. The library
// compiles them as modules of their own, side by side at start-up: the first four in one
// module took 0.9-1.3 s to compile on the H200's host, the slowest module of a cold start
// (docs/startup.md).
#ifndef SKINNY_KERNELS
#define SKINNY_KERNELS 7
#endif
// The chunked kernels check for NaN codes with fp8x4_nan_flags: with ptxas of CUDA 13.0
// their 8- / 16-token builds hold 56 / 72 registers (two blocks: 92 / 116) against 55 / 72
// (92 / 117) on the masked add, the same allocation per warp. SKINNY_NAN_FLAGS=0 (a
// tuning point) takes the masked add (docs/performance.md, item 104).
#ifndef SKINNY_NAN_FLAGS
#define SKINNY_NAN_FLAGS 1
#endif
#if SKINNY_KERNELS & 1
SKINNY_KERNEL(w8a16_gemm_m16_skinny, 1, 1, 512, SKINNY_MIN_CTAS, SKINNY_NAN_FLAGS != 0, false)
SKINNY_KERNEL(w8a16_gemm_m16_skinny2, 2, 1, 512, 1, SKINNY_NAN_FLAGS != 0, false)
#endif
#if SKINNY_KERNELS & 2
// fp8x4_nan_flags in the 16-token build: 92 registers against 90, the same allocation per
// warp; the 8-token build would go from 62 to 68 and lose a CTA per SM. 0.97-1.00x the
// time at 12 and 16 tokens, on 4, 8 and 16 warps and on 32 rows (docs/performance.md,
// item 95).
SKINNY_KERNEL(w8a16_gemm_m16_skinny_deep, 0, 1, SKINNY_DEEP_MAX_THREADS,
              (SKINNY_DEEP_M8_CAPPED && SKINNY_DEEP_MIN_CTAS < 2 ? 2 : SKINNY_DEEP_MIN_CTAS),
              (TOKEN_GROUPS == 2 || SKINNY_DEEP_M8_CAPPED), SKINNY_DEEP_CLAMP != 0)
// The deep kernel for CTAs of up to 8 warps, three per SM: above 8 tokens its registers
// are capped at 80 (against 90), so three CTAs of 8 warps fit on an SM instead of two.
// Under its 80-register cap the flags' NaN check took 0.99-1.08x the time (item 95), so
// that build keeps the masked add; its 8-token build is the first form's.
SKINNY_KERNEL(w8a16_gemm_m16_skinny_deep3, 0, 1, 256, SKINNY_DEEP_M8_CAPPED ? 4 : 3,
              SKINNY_DEEP_M8_CAPPED, TOKEN_GROUPS == 1 && SKINNY_DEEP_CLAMP != 0)
#endif
#if SKINNY_KERNELS & 4
// The deep kernel on 32 rows per CTA, every warp on both 16-row groups: a warp's
// activations serve twice the weight bytes, so above 8 tokens an SM keeps twice the
// weight bytes in flight at the same warp count (126 registers against 90; the library
// builds it for 16 tokens only, docs/performance.md item 77).
SKINNY_KERNEL(w8a16_gemm_m16_skinny_deep32, 0, 2, 512, 1, TOKEN_GROUPS == 2, false)
#endif
