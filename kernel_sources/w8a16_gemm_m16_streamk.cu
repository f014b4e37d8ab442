// w8a16_gemm_m16_streamk: the streaming tensor-core W8A16 decode GEMM with a 16-row M
// tile, its work spread evenly over a persistent grid (stream-K).
//
//   y[i][j] = bf16_rn( sum_c P_c[i][j] ),  P_c = FP32 partial of the K blocks CTA c ran
//
// Why: with one CTA per tile the SMs get whole tiles, so a layer of 224 tiles on 132
// SMs keeps 92 SMs twice as busy as the other 40 and the chip waits on them. Here the
// layer is a list of U = tiles x K/128 units (128 weight rows x 128 K, tile-major), and
// CTA c of P runs units [c*U/P, (c+1)*U/P): every SM streams the same number of weight
// bytes. A CTA's weights flow through the ring of m16_stream_pipeline.cuh across tile
// boundaries: a ninth warp only fills the ring (one thread issues the tensor copies), the
// 8 compute warps own 16 rows of every unit each and hand a slot back through its
// `empty` barrier (one arrival per compute thread), so no warp waits for another between
// tiles.
//
// A tile whose units one CTA ran alone is stored from the warps' registers. A tile split
// over CTAs c0 < ... < c1 (only at the ends of their ranges) is reduced through the
// caller's workspace: each contributor's compute warps write its FP32 partial (slot 0 if
// the tile is the first of its range, else slot 1) and go on; the CTA's tenth warp, the
// finisher, then takes a ticket on the tile's counter, and in the last contributor to
// arrive adds the partials in the fixed order c0, c0+1, ..., c1, stores the tile and
// clears the counter for the next launch. No CTA waits for another and no atomics touch
// the values: results are bit-identical from run to run on one device.
//
// A range runs its split tiles first: the part of its first tile, then the part of its
// last tile, then the whole tiles between. The tickets, and most reductions, so fall in
// the middle of the launch, where the finisher's L2 round trips overlap the streaming,
// not in its tail (docs/performance.md, item 37).
//
// Workspace: `tickets` (one u32 per tile) and `partials` (P x 2 x 128 rows x 16 tokens
// FP32), all zero before the launch and left zero after it. Grid: (P, 1, 1)  Block: (320,
// 1, 1); dynamic shared memory 128 + stages * (16384 + m * 256) bytes. m in 1..16, K a
// multiple of 128, a_row_stride a multiple of 8; w_map / x_map as in
// w8a16_gemm_m16_stream.cu with 128-row boxes. Built twice, TOKEN_GROUPS=1 for m <= 8
// and 2 for m in 9..16, as w8a16_gemm_m16.cu. Test builds may define one
// METRALE_DEFECT_* switch (as w8a16_gemm_m16.cu); the diagnostic define
// METRALE_DIAG_RING_ONLY keeps the ring, the barriers and the stores but skips the tensor
// cores and the decode (wrong results: it measures what the ring alone streams, e.g. under
// ncu, against the full kernel); METRALE_DIAG_NO_REDUCE stores every tile from registers,
// split tiles included (wrong results: it measures what the workspace reduction costs). STREAMK_PREFETCH_STAGES=P (a tuning point) issues only P
// weight stages ahead of the wait for the preceding grid, the others with their
// activations. As a programmatic dependent launch it
// streams its first weights before the preceding kernel ends and touches activations,
// outputs and workspace only after it.
#include "m16_stream_pipeline.cuh"

namespace {

constexpr u32 kRows = 128;  // weight rows of a unit (one scale row)
constexpr u32 kSlotFloats = kRows * kMaxTokens;
constexpr u32 kComputeThreads = kThreads;             // 8 warps of 16 rows
constexpr u32 kProducerWarp = kComputeThreads / 32;   // then the producer warp
constexpr u32 kFinisherWarp = kProducerWarp + 1;      // and the finisher warp
constexpr u32 kBlockThreads = kComputeThreads + 64;
constexpr u32 kReduceBatch = 4;    // a finisher lane's partial quads of one contributor in flight
constexpr u32 kReduceSources = 2;  // contributors whose quads are in flight together
#if STREAM_TMA
constexpr u32 kFullCount = 2;   // the producer's arrive (which sets the bytes) and its
                                // cp.async arrival for the unit's scale
#else
constexpr u32 kFullCount = 32;  // every producer lane's cp.async arrival
#endif

// 4 bytes to shared memory, asynchronously (completion counted by a later
// cp.async.mbarrier.arrive of the same thread).
__device__ __forceinline__ void copy_4(u32 dst, const void* src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(dst), "l"(src) : "memory");
}

// A CTA's units [begin, end) in the order it runs them: `lead` units of its first tile,
// then `trail` units of its last tile when that tile is another one and is split, then
// the whole tiles between.
struct Work {
  u32 k_blocks;               // units per tile
  u32 tiles;                  // 128-row tiles of the layer
  u32 begin, end;             // this CTA's units
  u32 first_tile, last_tile;  // the tiles of units begin and end - 1
  u32 lead, trail;
};

__device__ __forceinline__ Work work_of(u32 cta, u32 ctas, u32 n, u32 k) {
  Work wk;
  wk.k_blocks = k / kBlockK;
  wk.tiles = (n + kRows - 1) / kRows;
  const u64 units = static_cast<u64>(wk.k_blocks) * wk.tiles;
  wk.begin = static_cast<u32>(static_cast<u64>(cta) * units / ctas);
  wk.end = static_cast<u32>(static_cast<u64>(cta + 1) * units / ctas);
  wk.first_tile = wk.begin / wk.k_blocks;
  wk.last_tile = wk.end > wk.begin ? (wk.end - 1) / wk.k_blocks : wk.first_tile;
  const u32 first_end = (wk.first_tile + 1) * wk.k_blocks;
  wk.lead = (wk.end < first_end ? wk.end : first_end) - wk.begin;
  wk.trail = wk.last_tile != wk.first_tile && wk.end % wk.k_blocks != 0
                 ? wk.end - wk.last_tile * wk.k_blocks
                 : 0;
  return wk;
}

// The unit of the CTA's i-th stage.
__device__ __forceinline__ u32 unit_at(const Work& wk, u32 i) {
  if (i < wk.lead) return wk.begin + i;
  if (i < wk.lead + wk.trail) return wk.last_tile * wk.k_blocks + (i - wk.lead);
  return (wk.first_tile + 1) * wk.k_blocks + (i - wk.lead - wk.trail);
}

// Whether the CTA's part of its first tile is split (job 0 of the finisher); its last
// tile's part is job 1 when trail > 0.
__device__ __forceinline__ bool lead_is_split(const Work& wk) {
  return wk.begin % wk.k_blocks != 0 || wk.lead < wk.k_blocks;
}

// The ring: slot s of `stages` at ring + s * stage_bytes, filled when full[s] completes,
// free again when empty[s] (one arrive per compute thread) does. The CTA's i-th stage
// goes to slot i % stages, in phase (i / stages) of both barriers.
struct Ring {
  u32 base, stage_bytes, stages;
  u32 full, empty;  // shared addresses of the barrier arrays (8 bytes each)
  u32 scales;       // shared address of the slots' block scales (4 bytes each)
};

// The producer warp: the unit's 128 x 128 weight box, then its m x 128 activations. On
// sm_90 lane 0 issues both as tensor copies; before, the warp's lanes copy 16-byte pieces
// of the rows below N and of the tokens.
__device__ __forceinline__ void issue_weights(const Operands& op, const Work& wk, const Ring& r,
                                              u32 i, const TensorMap* w_map, u64 policy) {
  const u32 lane = threadIdx.x % 32;
  const u32 u = unit_at(wk, i);
  const u32 dst = r.base + (i % r.stages) * r.stage_bytes;
  const u32 bar = r.full + 8 * (i % r.stages);
  const u32 n0 = u / wk.k_blocks * kRows;
  const u32 kb = u % wk.k_blocks;
  // The unit's block scale rides with its weights: block_scale[u], one scale row per
  // 128-row tile.
  u32 scale_unit = u;
#if defined(METRALE_DEFECT_WRONG_SCALE_ROW)
  scale_unit = (u + wk.k_blocks) % (wk.k_blocks * wk.tiles);
#endif
  if (lane == 0) copy_4(r.scales + 4 * (i % r.stages), op.block_scale + scale_unit);
#if STREAM_TMA
  if (lane != 0) return;
  barrier_arrive_copies(bar);
  barrier_expect(bar, kStageWeightBytes + op.m * kTokenBytes);
  tensor_copy(dst, w_map, kb * kBlockK, n0, bar, policy);
#else
  (void)w_map;
  (void)policy;
  (void)bar;
  const u32 rows = op.n - n0 < kRows ? op.n - n0 : kRows;
  const u8* src = op.weight + static_cast<u64>(n0) * op.k + kb * kBlockK;
  for (u32 p = lane; p < rows * (kBlockK / 16); p += 32) {
    copy_16(dst + 16 * p, src + static_cast<u64>(p / (kBlockK / 16)) * op.k + 16 * (p % (kBlockK / 16)));
  }
#endif
}

__device__ __forceinline__ void issue_activations(const Operands& op, const Work& wk, const Ring& r,
                                                  u32 i, const TensorMap* x_map) {
  const u32 lane = threadIdx.x % 32;
  const u32 kb = unit_at(wk, i) % wk.k_blocks;
  const u32 dst = r.base + (i % r.stages) * r.stage_bytes + kStageWeightBytes;
  const u32 bar = r.full + 8 * (i % r.stages);
#if STREAM_TMA
  if (lane != 0) return;
  tensor_copy(dst, x_map, kb * kBlockK, 0, bar);
#else
  (void)x_map;
  const u16* src = op.input + kb * kBlockK;
  for (u32 p = lane; p < op.m * (kTokenBytes / 16); p += 32) {
    copy_16(dst + 16 * p, src + static_cast<u64>(p / (kTokenBytes / 16)) * op.a_row_stride +
                              8 * (p % (kTokenBytes / 16)));
  }
  barrier_arrive_copies(bar);  // counts this lane's copies of both halves
#endif
}

__device__ void produce(const Operands& op, const Work& wk, const Ring& r, const TensorMap* w_map,
                        const TensorMap* x_map) {
  const u64 policy = l2_evict_first_policy();
  const u32 count = wk.end - wk.begin;
  const u32 first = count < r.stages ? count : r.stages;
  // The first unit's stage completes only when its activations land, and the copy that
  // brings them queues behind every weight box issued before it.
#if defined(STREAMK_PREFETCH_STAGES)
  const u32 early = first < STREAMK_PREFETCH_STAGES ? first : STREAMK_PREFETCH_STAGES;
#else
  const u32 early = first;  // the whole ring ahead of the wait
#endif
  for (u32 i = 0; i < early; ++i) issue_weights(op, wk, r, i, w_map, policy);
  wait_for_preceding_grid();  // a programmatic dependent launch: the activations are ready
  for (u32 i = 0; i < early; ++i) issue_activations(op, wk, r, i, x_map);
  for (u32 i = early; i < first; ++i) {
    issue_weights(op, wk, r, i, w_map, policy);
    issue_activations(op, wk, r, i, x_map);
  }
  for (u32 i = first; i < count; ++i) {
    barrier_wait(r.empty + 8 * (i % r.stages), (i / r.stages - 1) & 1);
    issue_weights(op, wk, r, i, w_map, policy);
    issue_activations(op, wk, r, i, x_map);
  }
}

__device__ __forceinline__ float load_shared_f32(u32 addr) {
  float v;
  asm volatile("ld.shared.f32 %0, [%1];" : "=f"(v) : "r"(addr));
  return v;
}

// One arrival on a tile's counter: the old count, with release and acquire at GPU scope.
__device__ __forceinline__ u32 take_ticket(u32* counter) {
  u32 old;
  asm volatile("atom.add.acq_rel.gpu.u32 %0, [%1], 1;" : "=r"(old) : "l"(counter) : "memory");
  return old;
}

// Output (token, row) of fragment element e of token group tg, for lane (g, t).
__device__ __forceinline__ u32 fragment_row(u32 e, u32 g) { return g + 8 * (e / 2); }
__device__ __forceinline__ u32 fragment_token(u32 tg, u32 e, u32 t) { return 8 * tg + 2 * t + (e % 2); }

// Where the tile's partial sits for contributor q: slot 1 only for the first contributor,
// and only if its range began in an earlier tile.
struct Contributors {
  u32 c0, c1;
  u32 c0_slot;
};

// The CTA that runs unit u: the largest c with floor(c*U/P) <= u.
__device__ __forceinline__ u32 owner_of(u64 u, u64 units, u64 ctas) {
  return static_cast<u32>(((u + 1) * ctas - 1) / units);
}

__device__ __forceinline__ Contributors contributors_of(const Work& wk, u32 tile) {
  const u64 units = static_cast<u64>(wk.k_blocks) * wk.tiles;
  Contributors c;
  c.c0 = owner_of(static_cast<u64>(tile) * wk.k_blocks, units, gridDim.x);
  c.c1 = owner_of(static_cast<u64>(tile) * wk.k_blocks + wk.k_blocks - 1, units, gridDim.x);
  const u32 c0_begin = static_cast<u32>(static_cast<u64>(c.c0) * units / gridDim.x);
  c.c0_slot = c0_begin / wk.k_blocks == tile ? 0 : 1;
  return c;
}

// Four floats at `offset` of contributor q's partial of the tile.
__device__ __forceinline__ float4* partial_quad(float* partials, const Contributors& c, u32 q,
                                                u32 offset) {
  const u32 slot = q == c.c0 ? c.c0_slot : 0;
  return reinterpret_cast<float4*>(partials + (2 * static_cast<u64>(q) + slot) * kSlotFloats + offset);
}

// The end of a run of one tile's units in the compute warps: a whole tile is stored
// from the registers; a split tile's partial goes to the CTA's workspace slot (0 for its
// first tile, 1 for its last), and each thread's arrival on `ready` hands it to the
// finisher.
template <u32 kTokenGroups>
__device__ __forceinline__ void finish_run(const Operands& op, const Work& wk, u32 tile, bool whole,
                                           const float (&acc)[kTokenGroups][4], float* partials,
                                           u32 ready) {
  const u32 warp = threadIdx.x / 32;
  const u32 lane = threadIdx.x % 32;
  const u32 g = lane / 4;
  const u32 t = lane % 4;
  const u32 n0 = tile * kRows;
#if defined(METRALE_DEFECT_SKIP_LAST_TILE)
  if (n0 + kRows >= op.n) {
    if (!whole) barrier_arrive(ready);
    return;
  }
#endif
  const bool split = !whole;
#if defined(METRALE_DIAG_NO_REDUCE)
  whole = true;  // split tiles stored from registers: they come out wrong
#endif
  if (whole) {
#pragma unroll
    for (u32 tg = 0; tg < kTokenGroups; ++tg)
#pragma unroll
      for (u32 e = 0; e < 4; ++e) {
        const u32 token = fragment_token(tg, e, t);
        u32 col = n0 + 16 * warp + fragment_row(e, g);
#if defined(METRALE_DEFECT_SHIFT_ROW)
        if (token == 0) col ^= 1u;
#endif
        if (token < op.m && col < op.n) {
          op.output[static_cast<u64>(token) * op.c_row_stride + col] = f32_to_bf16_rn(acc[tg][e]);
        }
      }
    if (split) barrier_arrive(ready);  // only with METRALE_DIAG_NO_REDUCE
    return;
  }
  const u32 slot = tile == wk.first_tile ? 0 : 1;
  float* mine = partials + (2 * static_cast<u64>(blockIdx.x) + slot) * kSlotFloats;
#pragma unroll
  for (u32 tg = 0; tg < kTokenGroups; ++tg)
#pragma unroll
    for (u32 e = 0; e < 4; ++e) {
      const u32 row = 16 * warp + fragment_row(e, g);
      const u32 token = fragment_token(tg, e, t);
      if (token < op.m && n0 + row < op.n) mine[row * kMaxTokens + token] = acc[tg][e];
    }
  barrier_arrive(ready);  // release: the partial's writes come before the ticket
}

// The last contributor's part of a split tile, run by the finisher warp: the partials
// added in contributor order into the tile's outputs. Each partial element is read once,
// here, and cleared after the read, so a launch that completes leaves the whole
// workspace zero, whatever shape and grid come next. A lane takes four tokens of a row
// (one 16-byte load per contributor), kReduceBatch rows at a time, with kReduceSources
// contributors' loads in flight before it adds: the adds stay in contributor order.
// Tokens at or past m read and clear zeros.
__device__ void reduce_tile(const Operands& op, const Work& wk, u32 tile, float* partials,
                            u32* tickets) {
  const u32 lane = threadIdx.x % 32;
  const u32 n0 = tile * kRows;
  const Contributors c = contributors_of(wk, tile);
  const u32 quads = (op.m + 3) / 4;
  const u32 total = kRows * quads;
  for (u32 base = lane; base < total; base += 32 * kReduceBatch) {
    float4 sum[kReduceBatch];
#pragma unroll
    for (u32 j = 0; j < kReduceBatch; ++j) sum[j] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (u32 q0 = c.c0; q0 <= c.c1; q0 += kReduceSources) {
      float4 v[kReduceSources][kReduceBatch];
#pragma unroll
      for (u32 s = 0; s < kReduceSources; ++s)
#pragma unroll
        for (u32 j = 0; j < kReduceBatch; ++j) {
          const u32 idx = base + 32 * j;
          if (q0 + s <= c.c1 && idx < total) {
            v[s][j] = __ldcg(partial_quad(partials, c, q0 + s, idx / quads * kMaxTokens + 4 * (idx % quads)));
          }
        }
#pragma unroll
      for (u32 s = 0; s < kReduceSources; ++s)
#pragma unroll
        for (u32 j = 0; j < kReduceBatch; ++j) {
          const u32 idx = base + 32 * j;
          if (q0 + s <= c.c1 && idx < total) {
            sum[j].x += v[s][j].x;
            sum[j].y += v[s][j].y;
            sum[j].z += v[s][j].z;
            sum[j].w += v[s][j].w;
            __stcg(partial_quad(partials, c, q0 + s, idx / quads * kMaxTokens + 4 * (idx % quads)),
                   make_float4(0.0f, 0.0f, 0.0f, 0.0f));
          }
        }
    }
#pragma unroll
    for (u32 j = 0; j < kReduceBatch; ++j) {
      const u32 idx = base + 32 * j;
      if (idx >= total) break;
      u32 row = idx / quads;
      const u32 token0 = 4 * (idx % quads);
      if (n0 + row >= op.n) continue;
#if defined(METRALE_DEFECT_SHIFT_ROW)
      const u32 row0 = row;
#endif
      const float sums[4] = {sum[j].x, sum[j].y, sum[j].z, sum[j].w};
#pragma unroll
      for (u32 i = 0; i < 4; ++i) {
        const u32 token = token0 + i;
        if (token >= op.m) break;
#if defined(METRALE_DEFECT_SHIFT_ROW)
        row = token == 0 ? row0 ^ 1u : row0;
#endif
        op.output[static_cast<u64>(token) * op.c_row_stride + n0 + row] = f32_to_bf16_rn(sums[i]);
      }
    }
  }
  if (lane == 0) tickets[tile] = 0;  // every contributor has taken its ticket
}

// The finisher warp: for each split run of the CTA (its first tile's, then its last
// tile's), once the compute warps have written the partial, one ticket on the tile's
// counter; the contributor that arrives last reduces the tile. The compute warps never
// wait for it.
__device__ void finish(const Operands& op, const Work& wk, u32 ready, float* partials,
                       u32* tickets) {
  const u32 lane = threadIdx.x % 32;
  wait_for_preceding_grid();  // outputs and workspace are touched only after it
  for (u32 job = 0; job < 2; ++job) {
    if (job == 0 ? !lead_is_split(wk) : wk.trail == 0) continue;
    const u32 tile = job == 0 ? wk.first_tile : wk.last_tile;
    barrier_wait(ready + 8 * job, 0);
    const Contributors c = contributors_of(wk, tile);
    // The ticket's release publishes the partial (the compute threads' writes reach it
    // through the barrier, cumulatively); its acquire, passed on to the lanes by
    // __syncwarp, orders the other contributors' partials before the reads.
    u32 last = 0;
    if (lane == 0) last = take_ticket(&tickets[tile]) == c.c1 - c.c0 ? 1u : 0u;
    __syncwarp();
    last = __shfl_sync(0xFFFFFFFFu, last, 0);
#if defined(METRALE_DIAG_NO_REDUCE)
    last = 0;
    if (lane == 0) tickets[tile] = 0;
#endif
    if (last != 0) reduce_tile(op, wk, tile, partials, tickets);
  }
}

template <u32 kTokenGroups>
__device__ __forceinline__ void consume(const Operands& op, const Work& wk, const Ring& r,
                                        float* partials, u32 ready) {
  const u32 warp = threadIdx.x / 32;
  const u32 lane = threadIdx.x % 32;
  const u32 count = wk.end - wk.begin;
  const FragmentOffsets<kTokenGroups> frag = fragment_offsets<kTokenGroups>(op.m, lane / 4, lane % 4,
                                                                             kTokenBytes);
  const u32 warp_w = 16 * warp * kBlockK;  // the warp's 16 rows of a unit

  float acc[kTokenGroups][4];
  u32 nan_bits[2] = {0, 0};
#pragma unroll
  for (u32 tg = 0; tg < kTokenGroups; ++tg)
#pragma unroll
    for (u32 e = 0; e < 4; ++e) acc[tg][e] = 0.0f;

  // Outputs and the workspace are written only after the preceding grid has finished
  // (a programmatic dependent launch); the first stage cannot land before it anyway.
  wait_for_preceding_grid();
  u32 kb_first = wk.begin % wk.k_blocks;  // the first K block of the current run
  for (u32 i = 0; i < count; ++i) {
    const u32 u = unit_at(wk, i);
    const u32 kb = u % wk.k_blocks;
    const u32 slot = i % r.stages;
    const u32 base = r.base + slot * r.stage_bytes;
    barrier_wait(r.full + 8 * slot, (i / r.stages) & 1);
    const float scale = load_shared_f32(r.scales + 4 * slot);
#if defined(METRALE_DEFECT_DROP_KBLOCK)
    const bool fold = kb != wk.k_blocks - 1 || wk.k_blocks == 1;
#else
    const bool fold = true;
#endif
#if defined(METRALE_DIAG_RING_ONLY)
    (void)frag; (void)warp_w; (void)base; (void)scale; (void)fold;
#else
    compute_block<kTokenGroups>(acc, nan_bits, frag, base + warp_w, base + kStageWeightBytes, scale, fold);
#endif
    // Every compute thread releases its own reads of the slot (the scale included): the
    // producer's refill is ordered after each of them, not only after lane 0's.
    barrier_arrive(r.empty + 8 * slot);
    const bool lead_end = i + 1 == wk.lead;
    const bool trail_end = wk.trail != 0 && i + 1 == wk.lead + wk.trail;
    if (kb == wk.k_blocks - 1 || lead_end || trail_end) {
      poison_nan_columns<kTokenGroups>(acc, nan_bits);
      const bool whole = kb_first == 0 && kb == wk.k_blocks - 1;
      finish_run<kTokenGroups>(op, wk, u / wk.k_blocks, whole, acc, partials,
                               ready + (trail_end ? 8 : 0));
#pragma unroll
      for (u32 tg = 0; tg < kTokenGroups; ++tg)
#pragma unroll
        for (u32 e = 0; e < 4; ++e) acc[tg][e] = 0.0f;
      nan_bits[0] = nan_bits[1] = 0;
      kb_first = i + 1 < count ? unit_at(wk, i + 1) % wk.k_blocks : 0;
    }
  }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(kBlockThreads, 2)
w8a16_gemm_m16_streamk(const u16* __restrict__ input, const u8* __restrict__ weight,
                       const float* __restrict__ block_scale, u16* __restrict__ output, u32 m,
                       u32 n, u32 k, u32 a_row_stride, u32 c_row_stride,
                       float* __restrict__ partials, u32* __restrict__ tickets,
                       const __grid_constant__ TensorMap w_map,
                       const __grid_constant__ TensorMap x_map) {
  extern __shared__ __align__(16) unsigned char dynamic_smem[];
  unsigned char* smem = ring_start(dynamic_smem);
  __shared__ __align__(8) u64 full[kMaxStages];
  __shared__ __align__(8) u64 empty[kMaxStages];
  __shared__ __align__(8) u64 ready[2];  // a split run's partial is written (finisher jobs)
  __shared__ __align__(16) float scales[kMaxStages];
  const Operands op{input, weight, block_scale, output, m, n, k, a_row_stride, c_row_stride};
  Ring r;
  r.base = shared_address(smem);
  r.stage_bytes = kStageWeightBytes + m * kTokenBytes;
  r.stages = ring_stage_count(r.stage_bytes);
  r.full = shared_address(full);
  r.empty = shared_address(empty);
  r.scales = shared_address(scales);
  const Work wk = work_of(blockIdx.x, gridDim.x, n, k);
  // Every CTA is resident now: the next kernel of the stream may start its prologue.
  allow_dependent_grid();
  if (wk.begin == wk.end) return;
  if (threadIdx.x < r.stages) {
    barrier_init(r.full + 8 * threadIdx.x, kFullCount);
    barrier_init(r.empty + 8 * threadIdx.x, kComputeThreads);
  }
  if (threadIdx.x < 2) barrier_init(shared_address(ready) + 8 * threadIdx.x, kComputeThreads);
  barrier_init_fence();
  const u32 warp = threadIdx.x / 32;
  if (warp == kProducerWarp) {
    produce(op, wk, r, &w_map, &x_map);
  } else if (warp == kFinisherWarp) {
    finish(op, wk, shared_address(ready), partials, tickets);
  } else {
#if TOKEN_GROUPS == 1 || TOKEN_GROUPS == 2
    consume<TOKEN_GROUPS>(op, wk, r, partials, shared_address(ready));
#else
#error "build with TOKEN_GROUPS=1 (m <= 8) or TOKEN_GROUPS=2 (m in 9..16)"
#endif
  }
}
