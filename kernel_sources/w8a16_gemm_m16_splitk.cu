// w8a16_gemm_m16_splitk: the streaming tensor-core W8A16 decode GEMM with a 16-row M
// tile, split over K by thread-block clusters.
//
//   y[i][j] = bf16_rn( sum_b s[j/128][b] * P_b[i][j] ),  P_b = FP32 partial of K block b
//
// Why it is built this way: decode is a stream of weight bytes, read once. The CTA keeps
// `stages` stages of 16 KiB of weights in flight in shared memory with cp.async (no
// registers held by loads in flight), so the SM, not the warp, sets how many bytes are
// outstanding. A CTA owns `rows` weight rows (32, 64 or 128; one 128-row scale block) so
// the activations it re-reads from L2 shrink as the tile grows: 2*m/rows bytes per
// weight byte.
//
// A stage is 128 row segments of 128 bytes: the CTA's `rows` rows times kparts =
// 128/rows consecutive 128-K blocks. Warp w of 8 computes rows 16*(w % slabs) .. +15 of
// K block w / slabs of the stage (slabs = rows/16), so every warp does the same work
// (16 rows x 128 K) in every stage, whatever the tile. Eight warps per CTA, because
// with few warps the SM waits on instruction latencies, not on memory: every thread's
// copies are set up once (fixed rows, a moving K offset), so issuing a stage is a few
// instructions per 16 bytes.
//
// Per warp and K block, as in w8a16_gemm_m16.cu: the MMA's 16-row A operand is 16 weight
// rows and B is 8 tokens (m <= 8: one MMA per 16 rows and k16 step; m > 8: two), with K
// permuted inside every 64-wide chunk so that thread t's fragments come from 16
// contiguous bytes of a row and 16 contiguous activations of a token. FP8 is decoded
// with integer moves and one BF16 FMA per pair; a NaN code poisons its output column.
// Each block's partial starts from zero and is folded with one FMA per element onto the
// warp's FP32 accumulator. Warps of different K blocks are added in a fixed order through
// shared memory; the CTAs of a cluster (grid (ceil(N/rows), S), cluster (1, S)) add
// their partial tiles in rank order through distributed shared memory. No atomics touch
// the values: results are bit-identical from run to run.
//
// Shared memory (dynamic; the launcher sizes it): `stages` = dynamic size / stage_bytes,
// 2..8, with stage_bytes = 16384 + kparts*m*256 + 16 (weights, activations, scales).
// Both weight rows and activation rows are XOR-swizzled in 16-byte units so that a
// warp's 128-bit fragment loads hit distinct banks.
//
// Grid: (ceil(N/rows), S, 1)  Block: (256, 1, 1)  Cluster: (1, S, 1) when S > 1.
// m in 1..16, K a multiple of 128, a_row_stride a multiple of 8.
// Test builds may define one METRALE_DEFECT_* switch to plant a known defect (the same
// ones as w8a16_gemm_m16.cu); the shipped build defines none.
#include "metrale_device.cuh"

namespace {

constexpr u32 kThreads = 256;
constexpr u32 kWarps = kThreads / 32;
constexpr u32 kBlockK = 128;
constexpr u32 kSegments = 128;                          // 128-byte row segments per stage
constexpr u32 kStageWeightBytes = kSegments * kBlockK;  // 16 KiB
constexpr u32 kCopiesPerThread = kStageWeightBytes / 16 / kThreads;
constexpr u32 kTokenRowBytes = kBlockK * 2;             // 128 BF16 activations
constexpr u32 kMaxTokens = 16;
constexpr u32 kMaxStages = 8;
constexpr u32 kRedStride = kMaxTokens + 1;

struct Operands {
  const u16* input;
  const u8* weight;
  const float* block_scale;
  u16* output;
  u32 m, n, k, a_row_stride, c_row_stride, rows;
};

// How the CTA's shared memory and warps are laid out for this launch.
struct Layout {
  u32 rows;          // weight rows of the tile
  u32 kparts_log2;   // log2(128 / rows): K blocks per stage
  u32 slabs;         // rows / 16: warps per K block
  u32 act_offset;    // byte offset of the activations inside a stage
  u32 scale_offset;  // byte offset of the scales inside a stage
  u32 stage_bytes;
  u32 stages;
};

// After streaming, the reduction buffers reuse the stages' shared memory.
struct SharedReduce {
  float red[kWarps * 16 * kRedStride];  // [warp][row of its slab][token]
  float tile[kMaxTokens * kSegments];   // the CTA's partial tile, read by the cluster
};

__device__ __forceinline__ u32 dynamic_smem_bytes() {
  u32 r;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(r));
  return r;
}

__device__ __forceinline__ u32 shared_address(const void* p) {
  u64 generic = reinterpret_cast<u64>(p);
  u32 a;
  asm("{\n\t.reg .u64 s;\n\tcvta.to.shared.u64 s, %1;\n\tcvt.u32.u64 %0, s;\n\t}"
      : "=r"(a)
      : "l"(generic));
  return a;
}

// 16 bytes of weights global -> shared, bypassing L1, with the L2 policy `policy`.
__device__ __forceinline__ void copy_16(u32 dst, const void* src, u64 policy) {
  asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2;"
               :: "r"(dst), "l"(src), "l"(policy) : "memory");
}

// Activations: every CTA of the column re-reads them, so they keep the default L2 policy.
__device__ __forceinline__ void copy_16_cached(u32 dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(dst), "l"(src) : "memory");
}

__device__ __forceinline__ void copy_4(u32 dst, const void* src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(dst), "l"(src) : "memory");
}

__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }

// Waits until at most `pending` groups are in flight (wait_group takes an immediate).
__device__ __forceinline__ void wait_pending(u32 pending) {
  switch (pending) {
    case 0: asm volatile("cp.async.wait_group 0;" ::: "memory"); break;
    case 1: asm volatile("cp.async.wait_group 1;" ::: "memory"); break;
    case 2: asm volatile("cp.async.wait_group 2;" ::: "memory"); break;
    case 3: asm volatile("cp.async.wait_group 3;" ::: "memory"); break;
    case 4: asm volatile("cp.async.wait_group 4;" ::: "memory"); break;
    case 5: asm volatile("cp.async.wait_group 5;" ::: "memory"); break;
    default: asm volatile("cp.async.wait_group 6;" ::: "memory"); break;
  }
}

__device__ __forceinline__ uint4 load_shared_16(u32 addr) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(addr));
  return v;
}

__device__ __forceinline__ float load_shared_f32(u32 addr) {
  float v;
  asm volatile("ld.shared.f32 %0, [%1];" : "=f"(v) : "r"(addr));
  return v;
}

// One thread's share of every stage's copies. Thread q's j-th weight copy is unit q & 7 of
// segment (q >> 3) + 32j: the same K block and unit for every j, rows 32/kparts apart.
// Its activation copies likewise step by 16/kparts tokens. So a thread keeps one source
// and one destination per operand, and a stage costs a few adds per copy. The values
// pass through opaque() so that the compiler keeps them instead of re-deriving them from
// the thread index in every stage.
struct CopyPlan {
  const u8* w_src;   // first weight copy, at the CTA's first K block
  u64 w_src_step;    // bytes between consecutive weight copies
  u32 w_dst;         // offset of the first weight copy inside a stage
  u32 w_dst_step;
  u32 w_row;         // tile row of the first weight copy
  u32 w_row_step;
  const u16* x_src;  // first activation copy
  u64 x_src_step;    // elements between consecutive activation copies
  u32 x_dst;
  u32 x_dst_step;
  u32 x_count;       // activation copies of this thread (0..4)
  u32 w_kp;          // K block of the stage of this thread's weight copies
  u32 x_kp;          // ... and of its activation copies
};

template <typename T>
__device__ __forceinline__ T opaque(T v) {
  if constexpr (sizeof(T) == 8) {
    u64 r;
    asm volatile("mov.b64 %0, %1;" : "=l"(r) : "l"((u64)v));
    return (T)r;
  } else {
    u32 r;
    asm volatile("mov.b32 %0, %1;" : "=r"(r) : "r"((u32)v));
    return (T)r;
  }
}

// Activation copies per thread at most: 16 tokens x 4 K blocks x 16 units / 256 threads.
constexpr u32 kActCopiesMax = kMaxTokens * 4 * (kTokenRowBytes / 16) / kThreads;

__device__ __forceinline__ CopyPlan plan_copies(const Operands& op, const Layout& L, u32 n0,
                                                u32 kb_begin) {
  CopyPlan p;
  const u32 kp_mask = (1u << L.kparts_log2) - 1;
  {
    const u32 c = threadIdx.x & 7;  // 16-byte unit of the segment
    const u32 seg = threadIdx.x >> 3;
    const u32 kp = seg & kp_mask;
    const u32 row = seg >> L.kparts_log2;
    const u32 grow = n0 + row < op.n ? n0 + row : op.n - 1;
    p.w_kp = kp;
    p.w_row = row;
    p.w_row_step = (kThreads / 8) >> L.kparts_log2;
    p.w_dst = opaque((kp * L.rows + row) * kBlockK + ((c ^ ((row & 1) << 2)) << 4));
    p.w_dst_step = p.w_row_step * kBlockK;
    p.w_src = opaque(op.weight + static_cast<u64>(grow) * op.k + (kb_begin + kp) * kBlockK + 16 * c);
    p.w_src_step = opaque(static_cast<u64>(p.w_row_step) * op.k);
  }
  {
    const u32 c = threadIdx.x & 15;
    const u32 rest = threadIdx.x >> 4;
    const u32 kp = rest & kp_mask;
    const u32 token = rest >> L.kparts_log2;
    const u32 token_step = (kThreads / 16) >> L.kparts_log2;
    const u32 tokens = op.m;
    p.x_kp = kp;
    p.x_dst = opaque(L.act_offset + (kp * op.m + token) * kTokenRowBytes + ((c ^ (token & 1)) << 4));
    p.x_dst_step = token_step * kTokenRowBytes;
    p.x_src = opaque(op.input + static_cast<u64>(token) * op.a_row_stride + (kb_begin + kp) * kBlockK + 8 * c);
    p.x_src_step = opaque(static_cast<u64>(token_step) * op.a_row_stride);
    p.x_count = token < tokens ? (tokens - token + token_step - 1) / token_step : 0;
  }
  return p;
}

// Issues the copies of stage `i` (K blocks kb0 .. kb0 + kparts - 1 of the CTA's range)
// into `slot` and commits one group; past the last stage the group is empty, so every
// stage counts one group. Rows past N and K blocks past the CTA's range are not copied:
// their shared memory holds stale bytes that reach only outputs nobody stores.
__device__ __forceinline__ void issue_stage(const Layout& L, const CopyPlan& p, u32 rows_valid,
                                            u32 slot, u32 i, u32 num_stages, u32 kb_begin,
                                            u32 kb_end, const float* scales, u64 policy) {
  if (i < num_stages) {
    const u32 kb0 = kb_begin + (i << L.kparts_log2);
    const u32 kparts = 1u << L.kparts_log2;
    const u32 advance = (i << L.kparts_log2) * kBlockK;  // bytes of a weight row, elements of a token's
    const bool k_whole = kb0 + kparts <= kb_end;
    if (k_whole || kb0 + p.w_kp < kb_end) {
      const u8* src = p.w_src + advance;
      const u32 dst = slot + p.w_dst;
#pragma unroll
      for (u32 j = 0; j < kCopiesPerThread; ++j) {
        if (p.w_row + j * p.w_row_step < rows_valid) {
          copy_16(dst + j * p.w_dst_step, src + j * p.w_src_step, policy);
        }
      }
    }
    if (k_whole || kb0 + p.x_kp < kb_end) {
      const u16* src = p.x_src + advance;
      const u32 dst = slot + p.x_dst;
#pragma unroll
      for (u32 j = 0; j < kActCopiesMax; ++j) {
        if (j < p.x_count) copy_16_cached(dst + j * p.x_dst_step, src + j * p.x_src_step);
      }
    }
    if (threadIdx.x < kparts && kb0 + threadIdx.x < kb_end) {
      copy_4(slot + L.scale_offset + 4 * threadIdx.x, scales + kb0 + threadIdx.x);
    }
  }
  commit();
}

// Where one lane reads its fragments inside a warp's part of a stage, fixed for the
// whole loop: weights of rows g and g+8 (chunk h = 0; chunk 1 is unit ^ 4), and the
// 16-byte halves of token 8*tg + g's 16 activations (chunk 1 is 128 bytes on). Tokens
// past m read token m-1: their MMA columns are never stored.
template <u32 kTokenGroups>
struct FragmentOffsets {
  u32 w[2][2];             // [g / g+8][chunk]
  u32 x[kTokenGroups][2];  // [token group][first / second 8 k] of chunk 0
};

template <u32 kTokenGroups>
__device__ __forceinline__ FragmentOffsets<kTokenGroups> fragment_offsets(u32 m, u32 g, u32 t) {
  FragmentOffsets<kTokenGroups> f;
#pragma unroll
  for (u32 half = 0; half < 2; ++half)
#pragma unroll
    for (u32 h = 0; h < 2; ++h) {
      f.w[half][h] = (8 * half + g) * kBlockK + (((4 * h + t) ^ ((g & 1) << 2)) << 4);
    }
#pragma unroll
  for (u32 tg = 0; tg < kTokenGroups; ++tg) {
    const u32 token = 8 * tg + g < m ? 8 * tg + g : m - 1;
    f.x[tg][0] = token * kTokenRowBytes + (((2 * t) ^ (token & 1)) << 4);
    f.x[tg][1] = token * kTokenRowBytes + (((2 * t + 1) ^ (token & 1)) << 4);
  }
  return f;
}

__device__ __forceinline__ void nan_accumulate(u32& acc, u32 w0, u32 w1) {
  // Bit 7 of a byte of (w & 0x7F..) + 0x01.. is set where that byte is a NaN code; the
  // other bits are masked off once, after the loop.
  acc |= ((w0 & 0x7F7F7F7Fu) + 0x01010101u) | ((w1 & 0x7F7F7F7Fu) + 0x01010101u);
}

// One warp's 16 rows x one 128-K block of a stage: the block's partial onto `acc`.
template <u32 kTokenGroups>
__device__ __forceinline__ void compute_block(float (&acc)[kTokenGroups][4], u32 (&nan_bits)[2],
                                              const FragmentOffsets<kTokenGroups>& f, u32 w_base,
                                              u32 x_base, float scale, bool fold) {
  float part[kTokenGroups][4];
#pragma unroll
  for (u32 tg = 0; tg < kTokenGroups; ++tg)
#pragma unroll
    for (u32 e = 0; e < 4; ++e) part[tg][e] = 0.0f;

  uint4 w[2][2];  // [g / g+8][chunk]
#pragma unroll
  for (u32 half = 0; half < 2; ++half)
#pragma unroll
    for (u32 h = 0; h < 2; ++h) w[half][h] = load_shared_16(w_base + f.w[half][h]);
  uint4 x[2][kTokenGroups][2];  // [chunk][token group][first / second 8 k]
#pragma unroll
  for (u32 h = 0; h < 2; ++h)
#pragma unroll
    for (u32 tg = 0; tg < kTokenGroups; ++tg)
#pragma unroll
      for (u32 p = 0; p < 2; ++p) x[h][tg][p] = load_shared_16(x_base + 128 * h + f.x[tg][p]);

#pragma unroll
  for (u32 h = 0; h < 2; ++h) {
    const uint4 lo = w[0][h];
    const uint4 hi = w[1][h];
    const u32 lo_words[4] = {lo.x, lo.y, lo.z, lo.w};
    const u32 hi_words[4] = {hi.x, hi.y, hi.z, hi.w};
    nan_accumulate(nan_bits[0], lo.x, lo.y);
    nan_accumulate(nan_bits[0], lo.z, lo.w);
    nan_accumulate(nan_bits[1], hi.x, hi.y);
    nan_accumulate(nan_bits[1], hi.z, hi.w);
#pragma unroll
    for (u32 q = 0; q < 4; ++q) {
      u32 a[4];
      fp8x4_e4m3_to_bf16x2_fast(lo_words[q], a[0], a[2]);  // row g:   slots 0,1 | 2,3
      fp8x4_e4m3_to_bf16x2_fast(hi_words[q], a[1], a[3]);  // row g+8: slots 0,1 | 2,3
#pragma unroll
      for (u32 tg = 0; tg < kTokenGroups; ++tg) {
        const uint4 xs = x[h][tg][q / 2];
        u32 bfrag[2];
        bfrag[0] = (q % 2 == 0) ? xs.x : xs.z;
        bfrag[1] = (q % 2 == 0) ? xs.y : xs.w;
        mma_m16n8k16_bf16(part[tg], a, bfrag);
      }
    }
  }
  if (!fold) return;
#pragma unroll
  for (u32 tg = 0; tg < kTokenGroups; ++tg)
#pragma unroll
    for (u32 e = 0; e < 4; ++e) {
      acc[tg][e] = __fmaf_rn(scale, part[tg][e], acc[tg][e]);
#if defined(METRALE_DEFECT_BF16_ACCUM)
      acc[tg][e] = bf16_to_f32(f32_to_bf16_rn(acc[tg][e]));
#endif
    }
}

template <u32 kTokenGroups>
__device__ __forceinline__ void gemm(const Operands& op, const Layout& L, unsigned char* smem) {
  const u32 ring = shared_address(smem);
  const u32 warp = threadIdx.x / 32;
  const u32 lane = threadIdx.x % 32;
  const u32 g = lane / 4;
  const u32 t = lane % 4;
  const u32 slab = warp % L.slabs;
  const u32 kp = warp / L.slabs;
  const u32 n0 = blockIdx.x * L.rows;
  const u32 k_blocks = op.k / kBlockK;
  const u32 split = cluster_size();
  const u32 rank = cluster_rank();
  const u32 kb_begin = rank * k_blocks / split;
  const u32 kb_end = (rank + 1) * k_blocks / split;
  const u32 kparts = 1u << L.kparts_log2;
  const u32 num_stages = (kb_end - kb_begin + kparts - 1) >> L.kparts_log2;
  u32 scale_row = n0 / kBlockK;
#if defined(METRALE_DEFECT_WRONG_SCALE_ROW)
  scale_row = (scale_row + 1) % ((op.n + kBlockK - 1) / kBlockK);
#endif
  const float* scales = op.block_scale + static_cast<u64>(scale_row) * k_blocks;
  const u64 policy = l2_evict_first_policy();
  const CopyPlan plan = plan_copies(op, L, n0, kb_begin);
  const u32 rows_valid = op.n - n0 < L.rows ? op.n - n0 : L.rows;
  const FragmentOffsets<kTokenGroups> frag = fragment_offsets<kTokenGroups>(op.m, g, t);
  const u32 warp_w = (kp * L.rows + 16 * slab) * kBlockK;  // the warp's rows in a stage
  const u32 warp_x = L.act_offset + kp * op.m * kTokenRowBytes;

  float acc[kTokenGroups][4];
#pragma unroll
  for (u32 tg = 0; tg < kTokenGroups; ++tg)
#pragma unroll
    for (u32 e = 0; e < 4; ++e) acc[tg][e] = 0.0f;
  u32 nan_bits[2] = {0, 0};

  for (u32 i = 0; i + 1 < L.stages; ++i) {
    issue_stage(L, plan, rows_valid, ring + i * L.stage_bytes, i, num_stages, kb_begin, kb_end,
                scales, policy);
  }
  // Slots of the stage computed and of the stage issued in this iteration.
  u32 compute_slot = 0;
  u32 issue_slot = L.stages - 1;
  for (u32 i = 0; i < num_stages; ++i) {
    wait_pending(L.stages - 2);  // stage i has landed (for this thread's copies)
    __syncthreads();             // ... for every thread's; and stage i-1 is consumed
    issue_stage(L, plan, rows_valid, ring + issue_slot * L.stage_bytes, i + L.stages - 1,
                num_stages, kb_begin, kb_end, scales, policy);
    const u32 slot = ring + compute_slot * L.stage_bytes;
    const u32 kb = kb_begin + (i << L.kparts_log2) + kp;
    if (kb < kb_end) {
#if defined(METRALE_DEFECT_DROP_KBLOCK)
      const bool fold = kb != k_blocks - 1 || k_blocks == 1;
#else
      const bool fold = true;
#endif
      const float scale = load_shared_f32(slot + L.scale_offset + 4 * kp);
      compute_block<kTokenGroups>(acc, nan_bits, frag, slot + warp_w, slot + warp_x, scale, fold);
    }
    compute_slot = compute_slot + 1 == L.stages ? 0 : compute_slot + 1;
    issue_slot = issue_slot + 1 == L.stages ? 0 : issue_slot + 1;
  }
  asm volatile("cp.async.wait_all;" ::: "memory");

  // A NaN weight makes its whole output column NaN, as in the reference: the four lanes
  // of a quad hold different k of the same rows, so they pool what they saw.
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
  __syncthreads();  // the ring is dead: the reduction buffers reuse its memory

  SharedReduce& reduce = *reinterpret_cast<SharedReduce*>(smem);
  // red[warp][row][token]: C fragment element e is row g + 8*(e/2), token 2t + (e%2).
#pragma unroll
  for (u32 tg = 0; tg < kTokenGroups; ++tg)
#pragma unroll
    for (u32 e = 0; e < 4; ++e) {
      const u32 row = g + 8 * (e / 2);
      const u32 token = 8 * tg + 2 * t + (e % 2);
      reduce.red[(warp * 16 + row) * kRedStride + token] = acc[tg][e];
    }
  __syncthreads();

  // Output (token, col) of the tile: the kparts warps of col's slab, in K order.
  const u32 outputs = L.rows * (kTokenGroups * 8);
  const auto tile_sum = [&](u32 token, u32 col) {
#if defined(METRALE_DEFECT_SHIFT_ROW)
    if (token == 0) col ^= 1u;
#endif
    const u32 s = col / 16;
    const u32 row = col % 16;
    float sum = 0.0f;
    for (u32 p = 0; p < kparts; ++p) sum += reduce.red[((p * L.slabs + s) * 16 + row) * kRedStride + token];
    return sum;
  };
#if defined(METRALE_DEFECT_SKIP_LAST_TILE)
  if (blockIdx.x == gridDim.x - 1) return;  // every CTA of the last cluster leaves
#endif
  if (split == 1) {
    for (u32 idx = threadIdx.x; idx < outputs; idx += kThreads) {
      const u32 token = idx / L.rows;
      const u32 col = idx % L.rows;
      if (token >= op.m || n0 + col >= op.n) continue;
      op.output[static_cast<u64>(token) * op.c_row_stride + n0 + col] = f32_to_bf16_rn(tile_sum(token, col));
    }
    return;
  }

  // Split K: publish this CTA's partial tile, then each CTA adds one share of the
  // outputs over the cluster's tiles in rank order.
  for (u32 idx = threadIdx.x; idx < outputs; idx += kThreads) {
    reduce.tile[idx] = tile_sum(idx / L.rows, idx % L.rows);
  }
  cluster_sync();
  const u32 share = (outputs + split - 1) / split;
  const u32 first = rank * share;
  const u32 last = first + share < outputs ? first + share : outputs;
  for (u32 idx = first + threadIdx.x; idx < last; idx += kThreads) {
    const u32 token = idx / L.rows;
    const u32 col = idx % L.rows;
    if (token >= op.m || n0 + col >= op.n) continue;
    float sum = 0.0f;
    for (u32 q = 0; q < split; ++q) sum += load_cluster_f32(&reduce.tile[idx], q);
    op.output[static_cast<u64>(token) * op.c_row_stride + n0 + col] = f32_to_bf16_rn(sum);
  }
  cluster_sync();  // no CTA leaves while another may still read its tile
}

}  // namespace

// Read back by the host when the module loads: the weight bytes of one stage, which the
// launcher's shared-memory size assumes (W8A16_GEMM_M16_SPLITK_STAGE_WEIGHT_BYTES).
extern "C" __device__ unsigned int M16_SPLITK_STAGE_WEIGHT_BYTES = kStageWeightBytes;

extern "C" __global__ void __launch_bounds__(kThreads, 2)
w8a16_gemm_m16_splitk(const u16* __restrict__ input, const u8* __restrict__ weight,
                      const float* __restrict__ block_scale, u16* __restrict__ output, u32 m,
                      u32 n, u32 k, u32 a_row_stride, u32 c_row_stride, u32 rows) {
  extern __shared__ __align__(128) unsigned char smem[];
  const Operands op{input, weight, block_scale, output, m, n, k, a_row_stride, c_row_stride, rows};
  Layout L;
  L.rows = rows;
  L.kparts_log2 = rows == 32 ? 2 : rows == 64 ? 1 : 0;
  L.slabs = rows / 16;
  L.act_offset = kStageWeightBytes;
  L.scale_offset = L.act_offset + (m << L.kparts_log2) * kTokenRowBytes;
  L.stage_bytes = L.scale_offset + 16;
  L.stages = dynamic_smem_bytes() / L.stage_bytes;
  if (L.stages > kMaxStages) L.stages = kMaxStages;
  if (m <= 8) {
    gemm<1>(op, L, smem);
  } else {
    gemm<2>(op, L, smem);
  }
}
