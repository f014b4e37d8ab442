// w8a16_gemm_m16_stream: the streaming tensor-core W8A16 decode GEMM with a 16-row M
// tile, optionally split over K by thread-block clusters (w8a16_gemm_m16.cu holds the
// register-fed entries; the two win on different shapes, docs/performance.md).
//
//   y[i][j] = bf16_rn( sum_b s[j/128][b] * P_b[i][j] ),  P_b = FP32 partial of K block b
//
// Why it is built this way: decode is a stream of weight bytes, read once. The CTA keeps
// `stages` stages of 16 KiB of weights in flight in shared memory, so the SM, not the
// warps' registers, sets how many bytes are outstanding, and the warps spend their
// instructions on decoding, not on loads. On sm_90 one thread fills a stage with tensor
// copies (TMA: one box of the tile's rows per 128-K block, one of the tokens'
// activations) that complete on the stage's mbarrier; rows past N arrive as zeros.
// Before sm_90 every thread copies 16-byte pieces with cp.async and the same mbarrier
// counts them. A CTA owns `rows` weight rows (32, 64 or 128; one 128-row scale block),
// so the activations it re-reads from L2 shrink as the tile grows: 2*m/rows bytes per
// weight byte.
//
// A stage holds kparts = 128/rows consecutive 128-K blocks: for each, the tile's rows
// (128 bytes each, 16 KiB in all), then for each, the m tokens' activations (256 bytes
// each). Warp w of 8 computes rows 16*(w % slabs) .. +15 of K block w / slabs of the
// stage (slabs = rows/16), so every warp does the same work (16 rows x 128 K) in every
// stage, whatever the tile.
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
// Shared memory (dynamic; the launcher sizes it): 128 bytes of alignment slack, then
// `stages` = (dynamic size - 128) / stage_bytes slots (2..12), stage_bytes = 16384 +
// kparts * m * 256.
//
// Grid: (ceil(N/rows), S, 1)  Block: (256, 1, 1)  Cluster: (1, S, 1) when S > 1.
// m in 1..16, K a multiple of 128, a_row_stride a multiple of 8. w_map and x_map are
// the launcher's 2-D tensor maps of the weights (N rows of K bytes, box 128 x rows) and
// the activations (m rows of K BF16, box 128 x m); builds before sm_90 ignore them.
// Built twice, TOKEN_GROUPS=1 for m <= 8 and 2 for m in 9..16, as w8a16_gemm_m16.cu.
// Test builds may define one METRALE_DEFECT_* switch to plant a known defect (the same
// ones as w8a16_gemm_m16.cu); the shipped build defines none. Launched as a
// programmatic dependent launch, the kernel streams its first `prefetch_stages` stages'
// weights while the preceding kernel still runs (so that kernel must not write them).
// STREAM_NO_TMA=1 makes an sm_90 build use the cp.async path of older GPUs, so that it
// can be checked there.
#include "m16_stream_pipeline.cuh"

namespace {

constexpr u32 kRedStride = kMaxTokens + 1;

// How the CTA's shared memory and warps are laid out for this launch.
struct Layout {
  u32 rows;          // weight rows of the tile
  u32 kparts_log2;   // log2(128 / rows): K blocks per stage
  u32 slabs;         // rows / 16: warps per K block
  u32 w_block;       // bytes of one K block's weights in a stage: rows * 128
  u32 x_block;       // bytes of one K block's activations: m * 256
  u32 stage_bytes;   // kStageWeightBytes + kparts * x_block
  u32 stages;
};

// After streaming, the reduction buffers reuse the stages' shared memory.
struct SharedReduce {
  float red[kWarps * 16 * kRedStride];  // [warp][row of its slab][token]
  float tile[kMaxTokens * 128];         // the CTA's partial tile, read by the cluster
};

// What a stage's copies need besides the stage index.
struct Stream {
  const Operands* op;
  const Layout* L;
  const TensorMap* w_map;
  const TensorMap* x_map;
  u32 ring;        // shared address of slot 0
  u32 bars;        // shared address of the slots' barriers (8 bytes each)
  u32 n0;
  u32 rows_valid;  // tile rows below N
  u32 kb_begin, kb_end, num_stages;
  u64 policy;      // L2 policy of the weights
};

// Stage i holds K blocks kb0 .. kb0 + kparts - 1 of the CTA's range (fewer in a last
// partial stage) in slot i % stages. Its weights and its activations are issued
// separately, weights first, so that a programmatic dependent launch can stream
// weights before the preceding kernel has produced the activations; the slot's barrier
// completes once both have landed. On sm_90 thread 0 issues tensor copies; before,
// every thread copies 16-byte pieces, and rows past N and K blocks past the range are
// not copied: their shared memory holds stale bytes that reach only outputs nobody
// stores.
struct StageSpan {
  u32 dst;     // shared address of the slot
  u32 bar;     // its barrier
  u32 kb0;     // first K block
  u32 kvalid;  // K blocks in the stage (0: past the CTA's range)
};

__device__ __forceinline__ StageSpan stage_span(const Stream& st, u32 i) {
  const Layout& L = *st.L;
  const u32 slot = i % L.stages;
  const u32 kb0 = st.kb_begin + (i << L.kparts_log2);
  const u32 kparts = 1u << L.kparts_log2;
  const u32 kvalid = i >= st.num_stages ? 0 : st.kb_end - kb0 < kparts ? st.kb_end - kb0 : kparts;
  return StageSpan{st.ring + slot * L.stage_bytes, st.bars + 8 * slot, kb0, kvalid};
}

__device__ __forceinline__ void issue_weights(const Stream& st, u32 i) {
  const Layout& L = *st.L;
  const StageSpan sp = stage_span(st, i);
#if STREAM_TMA
  if (threadIdx.x != 0 || sp.kvalid == 0) return;
  barrier_expect(sp.bar, sp.kvalid * (L.w_block + L.x_block));
  for (u32 p = 0; p < sp.kvalid; ++p) {
    tensor_copy(sp.dst + p * L.w_block, st.w_map, (sp.kb0 + p) * kBlockK, st.n0, sp.bar, st.policy);
  }
#else
  const Operands& op = *st.op;
  const u8* src = op.weight + static_cast<u64>(st.n0) * op.k + sp.kb0 * kBlockK;
  const u32 units = st.rows_valid * (kBlockK / 16);  // 16-byte pieces per K block
  for (u32 u = threadIdx.x; u < sp.kvalid * units; u += kThreads) {
    const u32 p = u / units;
    const u32 r = u % units / (kBlockK / 16);
    const u32 c = u % (kBlockK / 16);
    copy_16(sp.dst + p * L.w_block + r * kBlockK + 16 * c,
            src + static_cast<u64>(r) * op.k + p * kBlockK + 16 * c);
  }
#endif
}

__device__ __forceinline__ void issue_activations(const Stream& st, u32 i) {
  const Layout& L = *st.L;
  const StageSpan sp = stage_span(st, i);
#if STREAM_TMA
  if (threadIdx.x != 0 || sp.kvalid == 0) return;
  for (u32 p = 0; p < sp.kvalid; ++p) {
    tensor_copy(sp.dst + kStageWeightBytes + p * L.x_block, st.x_map, (sp.kb0 + p) * kBlockK, 0,
                sp.bar);
  }
#else
  const Operands& op = *st.op;
  const u16* src = op.input + sp.kb0 * kBlockK;
  const u32 units = op.m * (kTokenBytes / 16);
  for (u32 u = threadIdx.x; u < sp.kvalid * units; u += kThreads) {
    const u32 p = u / units;
    const u32 tok = u % units / (kTokenBytes / 16);
    const u32 c = u % (kTokenBytes / 16);
    copy_16(sp.dst + kStageWeightBytes + p * L.x_block + tok * kTokenBytes + 16 * c,
            src + static_cast<u64>(tok) * op.a_row_stride + p * kBlockK + 8 * c);
  }
  barrier_arrive_copies(sp.bar);  // counts this thread's copies of both halves
#endif
}

template <u32 kTokenGroups>
__device__ __forceinline__ void gemm(const Operands& op, const Layout& L, unsigned char* smem,
                                     u32 bars, const TensorMap* w_map, const TensorMap* x_map,
                                     u32 prefetch_stages) {
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
  Stream st;
  st.op = &op;
  st.L = &L;
  st.w_map = w_map;
  st.x_map = x_map;
  st.ring = shared_address(smem);
  st.bars = bars;
  st.n0 = n0;
  st.rows_valid = op.n - n0 < L.rows ? op.n - n0 : L.rows;
  st.kb_begin = rank * k_blocks / split;
  st.kb_end = (rank + 1) * k_blocks / split;
  const u32 kparts = 1u << L.kparts_log2;
  st.num_stages = (st.kb_end - st.kb_begin + kparts - 1) >> L.kparts_log2;
  st.policy = l2_evict_first_policy();
  u32 scale_row = n0 / kBlockK;
#if defined(METRALE_DEFECT_WRONG_SCALE_ROW)
  scale_row = (scale_row + 1) % ((op.n + kBlockK - 1) / kBlockK);
#endif
  const float* scales = op.block_scale + static_cast<u64>(scale_row) * k_blocks;
  const FragmentOffsets<kTokenGroups> frag = fragment_offsets<kTokenGroups>(op.m, g, t, kTokenBytes);
  const u32 warp_w = kp * L.w_block + 16 * slab * kBlockK;    // the warp's rows and block
  const u32 warp_x = kStageWeightBytes + kp * L.x_block;        // ... and activations

  float acc[kTokenGroups][4];
  set_zero(acc);
  u32 nan_bits[2] = {0, 0};

  issue_first_stages(L.stages, prefetch_stages, [&](u32 i) { issue_weights(st, i); },
                     [&](u32 i) { issue_activations(st, i); });
  // The block scale of this warp's next stage is loaded one stage ahead.
  const auto warp_block = [&](u32 i) { return st.kb_begin + (i << L.kparts_log2) + kp; };
  float scale = warp_block(0) < st.kb_end ? __ldg(scales + warp_block(0)) : 0.0f;
  u32 slot = 0;
  u32 parity = 0;
  for (u32 i = 0; i < st.num_stages; ++i) {
    const u32 kb = warp_block(i);
    const float next_scale = warp_block(i + 1) < st.kb_end ? __ldg(scales + warp_block(i + 1)) : 0.0f;
    barrier_wait(bars + 8 * slot, parity);
    if (kb < st.kb_end) {
#if defined(METRALE_DEFECT_DROP_KBLOCK)
      const bool fold = kb != k_blocks - 1 || k_blocks == 1;
#else
      const bool fold = true;
#endif
      const u32 base = st.ring + slot * L.stage_bytes;
      compute_block<kTokenGroups>(acc, nan_bits, frag, base + warp_w, base + warp_x, scale, fold);
    }
    scale = next_scale;
    __syncthreads();  // every warp is done with this slot: refill it
    issue_weights(st, i + L.stages);
    issue_activations(st, i + L.stages);
    next_slot(slot, parity, L.stages);
  }

  poison_nan_columns<kTokenGroups>(acc, nan_bits);
  // The ring is dead (every issued stage was waited for, and the last loop iteration
  // ended on a barrier): the reduction buffers reuse its memory.
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
// launcher's shared-memory size assumes (W8A16_GEMM_M16_STREAM_STAGE_WEIGHT_BYTES).
extern "C" __device__ unsigned int M16_STREAM_STAGE_WEIGHT_BYTES = kStageWeightBytes;

extern "C" __global__ void __launch_bounds__(kThreads, 2)
w8a16_gemm_m16_stream(const u16* __restrict__ input, const u8* __restrict__ weight,
                      const float* __restrict__ block_scale, u16* __restrict__ output, u32 m,
                      u32 n, u32 k, u32 a_row_stride, u32 c_row_stride, u32 rows,
                      u32 prefetch_stages, const __grid_constant__ TensorMap w_map,
                      const __grid_constant__ TensorMap x_map) {
  extern __shared__ __align__(16) unsigned char dynamic_smem[];
  unsigned char* smem = ring_start(dynamic_smem);
  __shared__ __align__(8) u64 stage_barriers[kMaxStages];
  const Operands op{input, weight, block_scale, output, m, n, k, a_row_stride, c_row_stride};
  Layout L;
  L.rows = rows;
  L.kparts_log2 = rows == 32 ? 2 : rows == 64 ? 1 : 0;
  L.slabs = rows / 16;
  L.w_block = rows * kBlockK;
  L.x_block = m * kTokenBytes;
  L.stage_bytes = kStageWeightBytes + (L.x_block << L.kparts_log2);
  L.stages = ring_stage_count(L.stage_bytes);
  // Every CTA is resident now: the next kernel of the stream may start its prologue.
  allow_dependent_grid();
  const u32 bars = shared_address(stage_barriers);
  if (threadIdx.x < L.stages) barrier_init(bars + 8 * threadIdx.x, kBarrierCount);
  barrier_init_fence();
#if TOKEN_GROUPS == 1
  gemm<1>(op, L, smem, bars, &w_map, &x_map, prefetch_stages);
#elif TOKEN_GROUPS == 2
  gemm<2>(op, L, smem, bars, &w_map, &x_map, prefetch_stages);
#else
#error "build with TOKEN_GROUPS=1 (m <= 8) or TOKEN_GROUPS=2 (m in 9..16)"
#endif
}
