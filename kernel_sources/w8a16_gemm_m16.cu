// w8a16_gemm_m16_strided (N_TILE=32: the kernel of the entries w8a16_gemm_m16, which
// passes its pitches k and n, w8a16_gemm_m16_strided and w8a16_gemm_m16_splitk) and
// w8a16_gemm_m16_n64 (N_TILE=64), one per module: the tensor-core W8A16 decode GEMM with
// a 16-row M tile.
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
// A CTA of 4 warps owns N_TILE weight rows. Warp w takes the 128-K blocks w, w+4, ... of
// the CTA's K range. Each warp keeps depth_for() blocks in flight: the weights in a ring
// of registers (16-byte loads, evict-first from L2), the activations in a per-warp
// shared-memory ring filled by cp.async. FP8 is decoded with integer moves and one BF16
// FMA per pair (metrale_device.cuh); a NaN code poisons its output column. Each block's partial
// starts from zero in the MMA accumulators and is folded with one FMA per element onto
// the warp's FP32 accumulator (the block scale is the same for the whole tile: N_TILE
// divides 128). The four warps' sums are added in a fixed order through shared memory.
//
// The split-K entry runs the strided kernel as a thread-block cluster of S CTAs (grid
// (ceil(N/32), S), cluster (1, S)) on each tile, CTA r taking the r-th share of the K
// blocks; the S partial tiles are added in rank order through distributed shared memory,
// so results are deterministic and no atomics touch the values. Without a cluster
// launch S = 1.
//
// Launched as a programmatic dependent launch, a CTA loads its first weights while the
// preceding kernel still runs and waits for it only before reading activations; the
// weights and scales must therefore not be written by that kernel.
//
// Grid: (ceil(N/N_TILE), S, 1)  Block: (128, 1, 1).  m in 1..16, K a multiple of 128.
// Built twice, as two modules that compile side by side at start-up: TOKEN_GROUPS=1 (one
// 8-token MMA group) for m <= 8, TOKEN_GROUPS=2 for m in 9..16; the launchers pick by m.
// Test builds may define one METRALE_DEFECT_* switch to plant a known defect; the
// shipped build defines none. Diagnostic defines (wrong results, for bench --time-wrong):
// METRALE_DIAG_LOADS_ONLY skips the decode and the MMAs, METRALE_DIAG_NO_CLUSTER_REDUCE
// the split-K reduction through distributed shared memory.
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
constexpr u32 kMaxSplit = 8;  // the largest portable cluster (W8A16_GEMM_M16_SPLITK_MAX)
constexpr u32 kRedStride = kMaxTokens + 1;  // padded row of the reduction buffer
constexpr u32 kXPitch = kBlockK + 8;       // activations per staged token row (padded)

// K blocks each warp keeps in flight, for m <= 8 and for m > 8. Two measured best on an
// H200 (docs/performance.md: four held more registers and ran slower), except for the
// 64-wide tile above 8 tokens, where its four row groups already keep enough loads in
// flight and one ran 8-15 % faster on 9 of the 13 layers (and compiles faster); the
// defines let `metrale bench --define` compare others.
#ifndef M16_DEPTH_M8
#define M16_DEPTH_M8 2
#endif
#ifndef M16_DEPTH_M16
#if N_TILE == 64
#define M16_DEPTH_M16 1
#else
#define M16_DEPTH_M16 2
#endif
#endif
// Independent MMA accumulators per block: 2 gives each 64-K half of a block its own
// chain of MMAs (half as long), added before the block scale; a small layer's launch
// waits on that chain once its last weights land. Measured on an H200 against 1 chain:
// 0.98-1.02x the time up to 8 tokens, but up to 3 % slower above 8 (the second chain's
// registers), hence 2 for TOKEN_GROUPS=1 only (docs/performance.md).
#ifndef M16_MMA_CHAINS
#if TOKEN_GROUPS == 1
#define M16_MMA_CHAINS 2
#else
#define M16_MMA_CHAINS 1
#endif
#endif
#if M16_MMA_CHAINS != 1 && M16_MMA_CHAINS != 2
#error "M16_MMA_CHAINS must be 1 or 2"
#endif
constexpr u32 kMmaChains = M16_MMA_CHAINS;

// CTAs per SM the register allocation must allow (__launch_bounds__ minimum).
#ifndef M16_MIN_CTAS
#define M16_MIN_CTAS 1
#endif
template <u32 kTokenGroups>
__host__ __device__ constexpr u32 depth_for() {
  return kTokenGroups == 1 ? M16_DEPTH_M8 : M16_DEPTH_M16;
}

// Each warp's ring of staged activations: [warp][stage][token][k].
template <u32 kTokenGroups>
struct SharedRing {
  u16 x[kWarps][depth_for<kTokenGroups>()][8 * kTokenGroups][kXPitch];
};

// What one thread holds of one 128-K block: per row group, rows g and g+8, chunks h = 0, 1
// (16 bytes each), and the block's scale.
struct BlockWeights {
  uint4 w[kRowGroups][2][2];  // [row group][row g / g+8][chunk h]
  float scale;
};

// After streaming, the reduction buffers reuse the rings' shared memory.
struct SharedReduce {
  float red[kWarps * N_TILE * kRedStride];
  float tile[kMaxTokens * N_TILE];  // the CTA's partial tile, read by the cluster
};
__host__ __device__ constexpr u32 max_u32(u32 a, u32 b) { return a > b ? a : b; }
constexpr u32 kSharedBytes = max_u32(
    max_u32(sizeof(SharedRing<1>), sizeof(SharedRing<2>)), sizeof(SharedReduce));

__device__ __forceinline__ void load_block(BlockWeights& bw, const Operands& op, u32 n0, u32 b,
                                           const float* scales, u64 policy, u32 g, u32 t) {
#pragma unroll
  for (u32 r = 0; r < kRowGroups; ++r) {
#pragma unroll
    for (u32 half = 0; half < 2; ++half) {
      const u32 row = n0 + 16 * r + g + 8 * half;
#pragma unroll
      for (u32 h = 0; h < 2; ++h) {
        if (row < op.n) {
          bw.w[r][half][h] = load_stream_16(op.weight + static_cast<u64>(row) * op.k +
                                            b * kBlockK + 64 * h + 16 * t,
                                            policy);
        } else {
          bw.w[r][half][h] = make_uint4(0, 0, 0, 0);
        }
      }
    }
  }
  bw.scale = scales[b];
}

// Stages the activations of block b (tokens < m) into `slot` with 16-byte cp.async and
// commits one group; past the warp's last block the group is empty, so every stage still
// counts one group.
template <u32 kTokenGroups>
__device__ __forceinline__ void stage_x(u16 (*slot)[kXPitch], const Operands& op, u32 b,
                                        bool active, u32 lane) {
  constexpr u32 kChunks = kTokenGroups * 8 * (kBlockK / 8);  // 16-byte pieces
#pragma unroll
  for (u32 c = lane; c < kChunks && active; c += 32) {
    const u32 token = c / (kBlockK / 8);
    const u32 piece = c % (kBlockK / 8);
    if (token < op.m) {
      const u16* src = op.input + static_cast<u64>(token) * op.a_row_stride + b * kBlockK + 8 * piece;
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;"
                   :: "r"(shared_address(&slot[token][8 * piece])), "l"(src) : "memory");
    }
  }
  asm volatile("cp.async.commit_group;" ::: "memory");
}

template <u32 kTokenGroups>
__device__ __forceinline__ void block_mma(float (&part)[kMmaChains][kRowGroups][kTokenGroups][4],
                                          u32 (&nan_bits)[kRowGroups][2],
                                          const BlockWeights& bw, const u16 (*slot)[kXPitch],
                                          u32 m, u32 g, u32 t) {
#pragma unroll
  for (u32 h = 0; h < 2; ++h) {
    // B fragments: token 8*tg + g, activations 16t .. 16t+15 of chunk h.
    uint4 x[kTokenGroups][2];
#pragma unroll
    for (u32 tg = 0; tg < kTokenGroups; ++tg) {
      const u32 token = 8 * tg + g;
      if (token < m) {
        const uint4* src = reinterpret_cast<const uint4*>(&slot[token][64 * h + 16 * t]);
        x[tg][0] = src[0];
        x[tg][1] = src[1];
      } else {
        x[tg][0] = make_uint4(0, 0, 0, 0);
        x[tg][1] = make_uint4(0, 0, 0, 0);
      }
    }
#pragma unroll
    for (u32 r = 0; r < kRowGroups; ++r) {
      mma_half_block<kTokenGroups>(part[h % kMmaChains][r], nan_bits[r], bw.w[r][0][h],
                                   bw.w[r][1][h], x);
    }
  }
}

template <u32 kTokenGroups>
__device__ __forceinline__ void gemm_m16(const Operands& op, unsigned char* smem) {
  constexpr u32 kDepth = depth_for<kTokenGroups>();
  SharedRing<kTokenGroups>& ring = *reinterpret_cast<SharedRing<kTokenGroups>*>(smem);
  SharedReduce& reduce = *reinterpret_cast<SharedReduce*>(smem);
  const u32 warp = threadIdx.x / 32;
  const u32 lane = threadIdx.x % 32;
  const u32 g = lane / 4;
  const u32 t = lane % 4;
  const u32 n0 = blockIdx.x * N_TILE;
  const u32 k_blocks = op.k / kBlockK;
  const u32 split = cluster_size();
  const u32 rank = cluster_rank();
  const u32 kb_begin = rank * k_blocks / split;
  const u32 kb_end = (rank + 1) * k_blocks / split;
  u32 scale_row = n0 / kBlockK;
#if defined(METRALE_DEFECT_WRONG_SCALE_ROW)
  scale_row = (scale_row + 1) % ((op.n + kBlockK - 1) / kBlockK);
#endif
  const float* scales = op.block_scale + static_cast<u64>(scale_row) * k_blocks;
  const u64 policy = l2_evict_first_policy();

  float acc[kRowGroups][kTokenGroups][4];
  set_zero(acc);

  // NaN weight codes seen in this thread's rows (g, g+8 of each row group).
  u32 nan_bits[kRowGroups][2];
#pragma unroll
  for (u32 r = 0; r < kRowGroups; ++r) nan_bits[r][0] = nan_bits[r][1] = 0;

  // Prologue: the first kDepth blocks of this warp in flight. The weights and scales
  // are requested before waiting for the preceding kernel (a programmatic dependent
  // launch), the activations only after it.
  BlockWeights buf[kDepth];
#pragma unroll
  for (u32 s = 0; s < kDepth; ++s) {
    const u32 b = kb_begin + warp + kWarps * s;
    if (b < kb_end) load_block(buf[s], op, n0, b, scales, policy, g, t);
  }
  wait_for_preceding_grid();
#pragma unroll
  for (u32 s = 0; s < kDepth; ++s) {
    const u32 b = kb_begin + warp + kWarps * s;
    stage_x<kTokenGroups>(ring.x[warp][s], op, b, b < kb_end, lane);
  }

  for (u32 base = kb_begin + warp; base < kb_end; base += kWarps * kDepth) {
#pragma unroll
    for (u32 s = 0; s < kDepth; ++s) {
      const u32 b = base + kWarps * s;
      if (b >= kb_end) break;
      // This block's activations are the oldest of the kDepth groups in flight.
      asm volatile("cp.async.wait_group %0;" :: "n"(kDepth - 1) : "memory");
      __syncwarp();
      float part[kMmaChains][kRowGroups][kTokenGroups][4];
      set_zero(part);
#if defined(METRALE_DIAG_LOADS_ONLY)
      // Diagnostic: the weights are only folded into the NaN bits (kept live), no decode
      // and no MMA: what the loads, the activations' staging and the reduction cost alone.
#pragma unroll
      for (u32 r = 0; r < kRowGroups; ++r)
#pragma unroll
        for (u32 half = 0; half < 2; ++half)
#pragma unroll
          for (u32 h = 0; h < 2; ++h) {
            const uint4 v = buf[s].w[r][half][h];
            nan_bits[r][half] ^= v.x ^ v.y ^ v.z ^ v.w;
          }
#else
      block_mma<kTokenGroups>(part, nan_bits, buf[s], ring.x[warp][s], op.m, g, t);
#endif
      const float scale = buf[s].scale;
      __syncwarp();  // every lane has read the slot before it is refilled
      const u32 next = b + kWarps * kDepth;
      if (next < kb_end) load_block(buf[s], op, n0, next, scales, policy, g, t);
      stage_x<kTokenGroups>(ring.x[warp][s], op, next, next < kb_end, lane);
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
              acc[r][tg][e] = __fmaf_rn(
                  scale, kMmaChains == 2 ? part[0][r][tg][e] + part[1][r][tg][e] : part[0][r][tg][e],
                  acc[r][tg][e]);
#if defined(METRALE_DEFECT_BF16_ACCUM)
              acc[r][tg][e] = bf16_to_f32(f32_to_bf16_rn(acc[r][tg][e]));
#endif
            }
      }
    }
  }
  asm volatile("cp.async.wait_all;" ::: "memory");

#pragma unroll
  for (u32 r = 0; r < kRowGroups; ++r) poison_nan_columns<kTokenGroups>(acc[r], nan_bits[r]);
  __syncthreads();  // the rings are dead: the reduction buffers reuse their memory

  // red[warp][row][token]: C fragment element e is row g + 8*(e/2), token 2t + (e%2).
#pragma unroll
  for (u32 r = 0; r < kRowGroups; ++r)
#pragma unroll
    for (u32 tg = 0; tg < kTokenGroups; ++tg)
#pragma unroll
      for (u32 e = 0; e < 4; ++e) {
        const u32 row = 16 * r + g + 8 * (e / 2);
        const u32 token = 8 * tg + 2 * t + (e % 2);
        reduce.red[(warp * N_TILE + row) * kRedStride + token] = acc[r][tg][e];
      }
  __syncthreads();

  const u32 outputs = N_TILE * (kTokenGroups * 8);
#if defined(METRALE_DIAG_NO_CLUSTER_REDUCE)
  // Diagnostic: every CTA of a cluster stores its own partial tile (wrong results): what
  // the reduction through distributed shared memory costs.
  if (true) {
#else
  if (split == 1) {
#endif
#if defined(METRALE_DEFECT_SKIP_LAST_TILE)
    if (blockIdx.x == gridDim.x - 1) return;
#endif
    for (u32 idx = threadIdx.x; idx < outputs; idx += kThreads) {
      const u32 token = idx / N_TILE;
      const u32 col = idx % N_TILE;
      if (token >= op.m || n0 + col >= op.n) continue;
#if defined(METRALE_DEFECT_SHIFT_ROW)
      const u32 src_col = (token == 0) ? (col ^ 1u) : col;
#else
      const u32 src_col = col;
#endif
      float sum = 0.0f;
#pragma unroll
      for (u32 w = 0; w < kWarps; ++w) sum += reduce.red[(w * N_TILE + src_col) * kRedStride + token];
      op.output[static_cast<u64>(token) * op.c_row_stride + n0 + col] = f32_to_bf16_rn(sum);
    }
    return;
  }

  // Split K: publish this CTA's partial tile, then each CTA adds one share of the
  // outputs over the cluster's tiles in rank order.
  for (u32 idx = threadIdx.x; idx < outputs; idx += kThreads) {
    const u32 token = idx / N_TILE;
    const u32 col = idx % N_TILE;
    float sum = 0.0f;
#pragma unroll
    for (u32 w = 0; w < kWarps; ++w) sum += reduce.red[(w * N_TILE + col) * kRedStride + token];
    reduce.tile[idx] = sum;
  }
  cluster_sync();
  const u32 share = (outputs + split - 1) / split;
  const u32 first = rank * share;
  const u32 last = first + share < outputs ? first + share : outputs;
  for (u32 idx = first + threadIdx.x; idx < last; idx += kThreads) {
    const u32 token = idx / N_TILE;
    const u32 col = idx % N_TILE;
    if (token >= op.m || n0 + col >= op.n) continue;
    // Every rank's value is requested before the first is added: one round trip through
    // the cluster instead of `split`, the same rank order, the same sum.
    float v[kMaxSplit];
#pragma unroll
    for (u32 q = 0; q < kMaxSplit; ++q) v[q] = q < split ? load_cluster_f32(&reduce.tile[idx], q) : 0.0f;
    float sum = 0.0f;
#pragma unroll
    for (u32 q = 0; q < kMaxSplit; ++q) {
      if (q < split) sum += v[q];
    }
    op.output[static_cast<u64>(token) * op.c_row_stride + n0 + col] = f32_to_bf16_rn(sum);
  }
  cluster_sync();  // no CTA leaves while another may still read its tile
}

__device__ __forceinline__ void run(const Operands& op) {
  __shared__ __align__(16) unsigned char smem[kSharedBytes];
  // Every CTA is resident now: the next kernel of the stream may start its own
  // prologue where this one leaves room.
  allow_dependent_grid();
#if TOKEN_GROUPS == 1
  gemm_m16<1>(op, smem);
#elif TOKEN_GROUPS == 2
  gemm_m16<2>(op, smem);
#else
#error "build with TOKEN_GROUPS=1 (m <= 8) or TOKEN_GROUPS=2 (m in 9..16)"
#endif
}

}  // namespace

// One kernel per module: the modules compile in parallel at start-up, and a cold start
// waits for the slowest of them.
#if N_TILE == 32
// The strided kernel serves the contiguous entry too (pitches k and n: as fast as a
// kernel of its own, docs/startup.md) and the split-K entry: launched in a cluster of S
// CTAs on grid (ceil(N/32), S, 1), each CTA takes one share of the K blocks.
extern "C" __global__ void __launch_bounds__(kThreads, M16_MIN_CTAS)
w8a16_gemm_m16_strided(const u16* __restrict__ input, const u8* __restrict__ weight,
                       const float* __restrict__ block_scale, u16* __restrict__ output, u32 m,
                       u32 n, u32 k, u32 a_row_stride, u32 c_row_stride) {
  run(Operands{input, weight, block_scale, output, m, n, k, a_row_stride, c_row_stride});
}
#else
extern "C" __global__ void __launch_bounds__(kThreads, M16_MIN_CTAS)
w8a16_gemm_m16_n64(const u16* __restrict__ input, const u8* __restrict__ weight,
                   const float* __restrict__ block_scale, u16* __restrict__ output, u32 m,
                   u32 n, u32 k) {
  run(Operands{input, weight, block_scale, output, m, n, k, k, n});
}
#endif
