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
// over CTAs c0 < ... < c1 (only at the ends of their ranges) is added up by c0, whose
// range ends with the tile's first units, so it reaches the tile last (or with the CTAs
// whose ranges lie inside the tile). Each other contributor writes its FP32 partial to its
// own slot of the caller's workspace, one 32-bit word per element that is never zero once
// written, and goes on: no barrier, no fence, no atomic. After its last unit c0 waits for
// the words of c0+1..c1 to turn non-zero, adds their values to its registers in that fixed
// order, clears the words and stores the tile. Up to 8 tokens it loads c1's words as it
// starts the tile: c1's range goes on past the tile, so they are mostly written by then
// and the end of the launch holds one load fewer. Results are bit-identical from run to
// run on one device and grid. The wait needs the contributors to be scheduled while c0
// waits; a contributor writes its partial before it waits on anything, so two CTAs
// resident at a time suffice when CTAs start in index order (the hardware's order).
//
// Workspace: `partials`, P slots of 16 KiB (256 threads x 8 words of 32 bits use the
// first 8 KiB), all zero before the launch and left zero after it. Grid: (P, 1, 1)  Block: (288, 1, 1); dynamic shared
// memory 128 + stages * (16384 + m * 256) bytes. m in 1..16, K a multiple of 128,
// a_row_stride a multiple of 8; w_map / x_map as in w8a16_gemm_m16_stream.cu with 128-row
// boxes. Built twice, TOKEN_GROUPS=1 for m <= 8 and 2 for m in 9..16, as
// w8a16_gemm_m16.cu. Test builds may define one METRALE_DEFECT_* switch (as
// w8a16_gemm_m16.cu); the diagnostic define METRALE_DIAG_RING_ONLY keeps the ring, the
// barriers and the stores but skips the tensor cores and the decode (wrong results: it
// measures what the ring alone streams, e.g. under ncu, against the full kernel);
// METRALE_DIAG_NO_REDUCE stores every tile from registers, split tiles included (wrong
// results: it measures what the split tiles cost; bench --time-wrong times it);
// METRALE_DIAG_REDUCE_NO_WAIT adds the partials as read once, flagged or not (wrong
// wherever one is late: what the waiting costs); METRALE_DIAG_REDUCE_NO_READ writes the
// partials but stores a split tile from its first CTA's registers alone (what the reading
// costs; it leaves the workspace dirty, so a run of it needs a fresh workspace after);
// METRALE_DIAG_REDUCE_NO_CLEAR leaves the words it read in place (what the clearing costs;
// from the second launch on nothing waits and the partials are stale);
// METRALE_DIAG_COMPUTE_ONLY fills the ring once and runs every unit's decode and MMAs on
// those stages again (wrong results: what the compute warps alone take, against the ring
// alone of METRALE_DIAG_RING_ONLY); METRALE_DIAG_X_ONCE copies activations with the
// first stages only (sm_90; wrong results: what the activations' copies cost the ring);
// METRALE_DIAG_TIMELINE (right results) has compute thread 0 of each CTA write a timeline
// record (Timeline below) to the workspace's unused second half, which bench --timeline
// reads after the entry's last launch.
// `prefetch_stages`: weight stages issued ahead of the wait for the preceding grid, the
// others with their activations (produce). STREAMK_MIN_CTAS (a tuning point) sets the
// launch bounds' CTAs per SM (2), STREAMK_PARTIAL_ALL_PAIRS moves every word pair of a
// partial below 8 tokens too, STREAMK_PARTIAL_EVICT_NORMAL drops the partials' L2 hint,
// STREAMK_PARTIAL_WORDS64 writes 64-bit flagged words and STREAMK_PAIRS_IN_FLIGHT sets the
// pairs loaded before adding (docs/performance.md, items 65, 69, 70 and 71);
// STREAMK_X_BY_HALF (when a block's activations are loaded, item 143),
// STREAMK_LATE_PARTIAL and STREAMK_EARLY_PARTIAL_ALL (where c1's words are loaded),
// STREAMK_RAMP_NS (how far apart the first stages' weights are issued under PDL),
// STREAMK_EARLY_RELEASE (when a slot is released) and STREAMK_CONSUMER_SPIN /
// STREAMK_CONSUMER_WAIT_HINT (how a stage is waited for) are described where they act
// (items 128-130). As a programmatic dependent launch it streams its first weights before
// the preceding kernel ends and touches activations, outputs and workspace only after it.
#include "m16_stream_pipeline.cuh"

namespace {

constexpr u32 kRows = 128;  // weight rows of a unit (one scale row)
constexpr u32 kComputeThreads = kThreads;            // 8 warps of 16 rows
constexpr u32 kBlockThreads = kComputeThreads + 32;  // and the producer warp
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

struct Work {
  u32 k_blocks;      // units per tile
  u32 tiles;         // 128-row tiles of the layer
  u32 begin, end;    // this CTA's units
  u32 first_tile;    // the tile of unit `begin`
};

// a / b by the 32-bit division where both fit in 32 bits, as they do on every layer and
// grid the plan gives: the 64-bit one is a routine about three times as long (nvcc 13.0,
// sm_90: a kernel of one 64-bit division has 120 instructions, of one 32-bit division 40),
// and a CTA's first copy waits on two of them.
__device__ __forceinline__ u32 quotient(u64 a, u64 b) {
  if (((a | b) >> 32) == 0) return static_cast<u32>(a) / static_cast<u32>(b);
  return static_cast<u32>(a / b);
}

// The CTA that runs unit u: the largest c with floor(c*U/P) <= u.
__device__ __forceinline__ u32 even_owner_of(u64 u, u64 units, u64 ctas) {
  return quotient((u + 1) * ctas - 1, units);
}

__device__ __forceinline__ u32 even_range_begin(u64 c, u64 units, u64 ctas) {
  return quotient(c * units, ctas);
}

#if defined(STREAMK_LEAD_PERMILLE)
// STREAMK_LEAD_PERMILLE=d (a probe): the first half of the grid, the CTAs that reach their
// SMs first, takes units [0, UA) with UA = U (1000 + d) / 2000, the second half the rest,
// each half split evenly as above.
__device__ __forceinline__ u64 lead_units(u64 units) {
  return units * (1000 + STREAMK_LEAD_PERMILLE) / 2000;
}

__device__ __forceinline__ u32 owner_of(u64 u, u64 units, u64 ctas) {
  const u64 lead = ctas / 2, ua = lead_units(units);
  return u < ua ? even_owner_of(u, ua, lead)
                : static_cast<u32>(lead) + even_owner_of(u - ua, units - ua, ctas - lead);
}

__device__ __forceinline__ u32 range_begin(u64 c, u64 units, u64 ctas) {
  const u64 lead = ctas / 2, ua = lead_units(units);
  return c <= lead ? even_range_begin(c, ua, lead)
                   : static_cast<u32>(ua) + even_range_begin(c - lead, units - ua, ctas - lead);
}
#else
__device__ __forceinline__ u32 owner_of(u64 u, u64 units, u64 ctas) {
  return even_owner_of(u, units, ctas);
}

__device__ __forceinline__ u32 range_begin(u64 c, u64 units, u64 ctas) {
  return even_range_begin(c, units, ctas);
}
#endif

// The ring: slot s of `stages` at ring + s * stage_bytes, filled when full[s] completes,
// free again when empty[s] (one arrive per compute thread) does. Unit begin + i goes to
// slot i % stages, in phase (i / stages) of both barriers.
struct Ring {
  u32 base, stage_bytes, stages;
  u32 full, empty;  // shared addresses of the barrier arrays (8 bytes each)
  u32 scales;       // shared address of the slots' block scales (4 bytes each)
};

// The producer warp: the unit's 128 x 128 weight box, then its m x 128 activations. On
// sm_90 lane 0 issues both as tensor copies; before, the warp's lanes copy 16-byte pieces
// of the rows below N and of the tokens.
// Unit u (tile row n0, K block kb) into ring slot `slot`.
__device__ __forceinline__ void issue_weights_at(const Operands& op, const Work& wk, const Ring& r,
                                                 u32 slot, u32 u, u32 n0, u32 kb,
                                                 const TensorMap* w_map, u64 policy) {
  const u32 lane = threadIdx.x % 32;
  const u32 dst = r.base + slot * r.stage_bytes;
  const u32 bar = r.full + 8 * slot;
  // The unit's block scale rides with its weights: block_scale[u], one scale row per
  // 128-row tile.
  u32 scale_unit = u;
#if defined(METRALE_DEFECT_WRONG_SCALE_ROW)
  scale_unit = (u + wk.k_blocks) % (wk.k_blocks * wk.tiles);
#endif
  if (lane == 0) copy_4(r.scales + 4 * slot, op.block_scale + scale_unit);
#if STREAM_TMA
  if (lane != 0) return;
  barrier_arrive_copies(bar);
#if defined(METRALE_DIAG_X_ONCE)
  barrier_expect(bar, kStageWeightBytes + (u - wk.begin < r.stages ? op.m * kTokenBytes : 0));
#else
  barrier_expect(bar, kStageWeightBytes + op.m * kTokenBytes);
#endif
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

// The ring's i-th unit.
__device__ __forceinline__ void issue_weights(const Operands& op, const Work& wk, const Ring& r,
                                              u32 i, const TensorMap* w_map, u64 policy) {
  const u32 u = wk.begin + i;
  issue_weights_at(op, wk, r, i % r.stages, u, u / wk.k_blocks * kRows, u % wk.k_blocks, w_map,
                   policy);
}

__device__ __forceinline__ void issue_activations_at(const Operands& op, const Ring& r, u32 slot,
                                                     u32 kb, const TensorMap* x_map) {
  const u32 lane = threadIdx.x % 32;
  const u32 dst = r.base + slot * r.stage_bytes + kStageWeightBytes;
  const u32 bar = r.full + 8 * slot;
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

__device__ __forceinline__ void issue_activations(const Operands& op, const Work& wk, const Ring& r,
                                                  u32 i, const TensorMap* x_map) {
  issue_activations_at(op, r, i % r.stages, (wk.begin + i) % wk.k_blocks, x_map);
}

// ns between the first stages' weight copies where they are spaced (produce); 0: none.
#ifndef STREAMK_RAMP_NS
#define STREAMK_RAMP_NS 700
#endif

// The first stages in the order of issue_first_stages, then each unit's copies as soon
// as its slot is free.
__device__ void produce(const Operands& op, const Work& wk, const Ring& r, const TensorMap* w_map,
                        const TensorMap* x_map, u32 prefetch_stages) {
  const u64 policy = l2_evict_first_policy();
  const u32 count = wk.end - wk.begin;
  const u32 first = count < r.stages ? count : r.stages;
  // STREAMK_RAMP_NS=d (a tuning point, 0 = off): a programmatic dependent launch of more
  // CTAs than SMs issues first stage i's weights d * i ns after the first's. At d = 700 with
  // PDL on two CTAs per SM and 3 stages 0.988-0.991x the time (median), without PDL no
  // change, on one CTA per SM 1.003-1.008x (docs/performance.md, items 151 and 152).
#if STREAMK_RAMP_NS > 0
  const u64 ramp_t0 = global_time_ns();
  const bool ramped = prefetch_stages > 0 && gridDim.x > sm_id_count();
  const auto ramp = [&](u32 i) {
    if (!ramped || threadIdx.x % 32 != 0) return;
    while (global_time_ns() < ramp_t0 + u64{i} * STREAMK_RAMP_NS) {
    }
  };
#else
  const auto ramp = [](u32) {};
#endif
  issue_first_stages(
      first, prefetch_stages,
      [&](u32 i) {
        ramp(i);
        issue_weights(op, wk, r, i, w_map, policy);
      },
      [&](u32 i) { issue_activations(op, wk, r, i, x_map); });
#if defined(METRALE_DIAG_COMPUTE_ONLY)
  return;  // the compute warps run on the first stages' data over and over
#endif
  // The slot, its phase and the unit's place as counters, as in consume. first == stages
  // whenever the loop runs: unit `first` refills slot 0, phase 0.
  u32 slot = 0;
  u32 phase = 0;
  u32 u = wk.begin + first;
  u32 n0 = u / wk.k_blocks * kRows;
  u32 kb = u % wk.k_blocks;
  for (; u < wk.end; ++u) {
    barrier_wait(r.empty + 8 * slot, phase);
    issue_weights_at(op, wk, r, slot, u, n0, kb, w_map, policy);
#if !defined(METRALE_DIAG_X_ONCE) || !STREAM_TMA
    issue_activations_at(op, r, slot, kb, x_map);
#endif
    next_slot(slot, phase, r.stages);
    if (++kb == wk.k_blocks) {
      kb = 0;
      n0 += kRows;
    }
  }
}

__device__ __forceinline__ float load_shared_f32(u32 addr) {
  float v;
  asm volatile("ld.shared.f32 %0, [%1];" : "=f"(v) : "r"(addr));
  return v;
}

// Output (token, row) of fragment element e of token group tg, for lane (g, t).
__device__ __forceinline__ u32 fragment_row(u32 e, u32 g) { return g + 8 * (e / 2); }
__device__ __forceinline__ u32 fragment_token(u32 tg, u32 e, u32 t) { return 8 * tg + 2 * t + (e % 2); }

// A partial word, zero meaning "not written yet": the FP32 bits with the sign bit flipped,
// -0.0 written as +0.0 (the one value that would flip to zero; equal under the accuracy
// contract). A 32-bit access is single-copy atomic, so a reader that sees a word non-zero
// sees the value of the same write, with no fence between them. STREAMK_PARTIAL_WORDS64 (a
// tuning point) writes 64-bit words instead, the FP32 bits in the low half and a flag in
// the high half: twice the bytes (docs/performance.md, item 71).
#if defined(STREAMK_PARTIAL_WORDS64)
using PartialWord = u64;
__device__ __forceinline__ PartialWord flagged(float v) {
  return (u64{1} << 32) | __float_as_uint(v);
}
__device__ __forceinline__ float value_of(PartialWord w) {
  return __uint_as_float(static_cast<u32>(w));
}
#else
using PartialWord = u32;
__device__ __forceinline__ PartialWord flagged(float v) {
  const u32 bits = __float_as_uint(v);
  return (bits == 0x80000000u ? 0u : bits) ^ 0x80000000u;
}
__device__ __forceinline__ float value_of(PartialWord w) { return __uint_as_float(w ^ 0x80000000u); }
#endif
constexpr u32 kPartialPairs = 2 * kMaxTokens / 8;  // a thread's word pairs at TOKEN_GROUPS=2
// One CTA's slot, in words (the workspace holds 16 KiB per CTA, w8a16_gemm_m16_streamk.hpp).
constexpr u32 kPartialWords = 2 * kPartialPairs * kComputeThreads;
// Pairs of words a thread loads before it adds (STREAMK_PAIRS_IN_FLIGHT, a tuning point).
#ifndef STREAMK_PAIRS_IN_FLIGHT
#define STREAMK_PAIRS_IN_FLIGHT 8
#endif
constexpr u32 kWordsInFlight = STREAMK_PAIRS_IN_FLIGHT;

// Pair p of this thread's words in CTA cta's slot: a warp's pair p is contiguous (256 or
// 512 bytes), and a reader thread finds its own fragment's elements at the same place.
__device__ __forceinline__ PartialWord* partial_pair(u64* partials, u32 cta, u32 p) {
  return reinterpret_cast<PartialWord*>(partials) + static_cast<u64>(cta) * kPartialWords +
         2 * (p * kComputeThreads + threadIdx.x);
}

// On layers of 64 MiB and more the partials' stores and clears keep their lines in L2
// (l2_evict_last_policy), which took 0.96-0.99x the time on two CTAs per SM there and
// 1.00-1.07x on the layers of 16-56 MiB, on either grid (docs/performance.md, item 70;
// the loads carried the hint too then).
// STREAMK_PARTIAL_EVICT_NORMAL (a tuning point) drops the hint everywhere.
constexpr u64 kKeepPartialsFrom = u64{64} << 20;  // weight bytes

__device__ __forceinline__ bool keep_partials(const Operands& op) {
#if defined(STREAMK_PARTIAL_EVICT_NORMAL)
  (void)op;
  return false;
#else
  return static_cast<u64>(op.n) * op.k >= kKeepPartialsFrom;
#endif
}

#if defined(STREAMK_PARTIAL_WORDS64)
#define METRALE_PARTIAL_VEC "v2.u64"
#define METRALE_PARTIAL_REG "l"
#else
#define METRALE_PARTIAL_VEC "v2.u32"
#define METRALE_PARTIAL_REG "r"
#endif
__device__ __forceinline__ void store_pair(PartialWord* at, PartialWord a, PartialWord b,
                                           bool keep) {
  if (keep) {
    asm volatile("st.relaxed.gpu.global.L2::cache_hint." METRALE_PARTIAL_VEC " [%0], {%1, %2}, %3;"
                 :: "l"(at), METRALE_PARTIAL_REG(a), METRALE_PARTIAL_REG(b),
                    "l"(l2_evict_last_policy()) : "memory");
  } else {
    asm volatile("st.relaxed.gpu.global." METRALE_PARTIAL_VEC " [%0], {%1, %2};"
                 :: "l"(at), METRALE_PARTIAL_REG(a), METRALE_PARTIAL_REG(b) : "memory");
  }
}

// Loads carry no L2 hint: with the stores' and clears' evict-last hint alone the launch
// took 0.98-1.00x the time of loads with it too (docs/performance.md, item 95).
__device__ __forceinline__ void load_pair(const PartialWord* at, PartialWord& a, PartialWord& b) {
  asm volatile("ld.relaxed.gpu.global." METRALE_PARTIAL_VEC " {%0, %1}, [%2];"
               : "=" METRALE_PARTIAL_REG(a), "=" METRALE_PARTIAL_REG(b) : "l"(at) : "memory");
}
#undef METRALE_PARTIAL_VEC
#undef METRALE_PARTIAL_REG

// Whether this thread's pair p holds outputs: tokens 8 (p / 2) + 2t and the next, of
// which the first is below m. The writer and the reader of a pair are threads of the same
// index, so both skip the same pairs: below 8 tokens a partial moves only its tokens.
// STREAMK_PARTIAL_ALL_PAIRS (a tuning point) moves every pair, as for 16 tokens.
__device__ __forceinline__ bool pair_needed(u32 p, u32 m) {
#if defined(STREAMK_PARTIAL_ALL_PAIRS)
  return true;
#else
  return 8 * (p / 2) + 2 * (threadIdx.x % 4) < m;
#endif
}

// A run that starts inside its tile: its FP32 partial, flagged, in this CTA's slot.
template <u32 kTokenGroups>
__device__ __forceinline__ void write_partial(u64* partials, u32 m, bool keep,
                                              const float (&acc)[kTokenGroups][4]) {
#pragma unroll
  for (u32 tg = 0; tg < kTokenGroups; ++tg)
#pragma unroll
    for (u32 h = 0; h < 2; ++h) {
      if (!pair_needed(2 * tg + h, m)) continue;
      store_pair(partial_pair(partials, blockIdx.x, 2 * tg + h), flagged(acc[tg][2 * h]),
                 flagged(acc[tg][2 * h + 1]), keep);
    }
}

// acc += pair p of CTA q's partial, whose words are in w (loaded earlier, or zero), each
// polled until it is written; then the words are cleared: a launch that completes leaves
// every slot zero for the next, whatever its shape and grid.
template <u32 kTokenGroups>
__device__ __forceinline__ void add_pair(u64* partials, u32 q, u32 p, bool keep,
                                         PartialWord (&w)[2], float (&acc)[kTokenGroups][4]) {
#if !defined(METRALE_DIAG_REDUCE_NO_WAIT)
  while (w[0] == 0 || w[1] == 0) load_pair(partial_pair(partials, q, p), w[0], w[1]);
#endif
  acc[p / 2][2 * (p % 2)] += value_of(w[0]);
  acc[p / 2][2 * (p % 2) + 1] += value_of(w[1]);
#if !defined(METRALE_DIAG_REDUCE_NO_CLEAR)
  store_pair(partial_pair(partials, q, p), 0, 0, keep);
#endif
}

// The words of CTA q's partial as they are now (zero where not written yet), loaded while
// the tile's first CTA still runs its units: the last contributor's range goes on past
// the tile, so its partial is written long before the tile's first CTA reaches the tile's
// end, and the end of the launch then holds no load for it (docs/performance.md, item 128).
template <u32 kTokenGroups>
__device__ __forceinline__ void load_partial(u64* partials, u32 q, u32 m,
                                             PartialWord (&w)[2 * kTokenGroups][2]) {
#pragma unroll
  for (u32 p = 0; p < 2 * kTokenGroups; ++p) {
    if (pair_needed(p, m)) load_pair(partial_pair(partials, q, p), w[p][0], w[p][1]);
  }
}

// acc += CTA q's partial, whose words are in w (loaded earlier, or zero): each pair this
// thread moves (add_pair).
template <u32 kTokenGroups>
__device__ __forceinline__ void add_partial(u64* partials, u32 q, u32 m, bool keep,
                                            PartialWord (&w)[2 * kTokenGroups][2],
                                            float (&acc)[kTokenGroups][4]) {
#pragma unroll
  for (u32 p = 0; p < 2 * kTokenGroups; ++p) {
    if (pair_needed(p, m)) add_pair<kTokenGroups>(partials, q, p, keep, w[p], acc);
  }
}

// acc += the partials of CTAs first..last, in that order. Where kLastLoaded, `last_words`
// holds what an earlier load found of the last one's (zero where it was not written yet);
// else the last one's words are loaded with the others'.
template <u32 kTokenGroups, bool kLastLoaded>
__device__ __forceinline__ void add_partials(u64* partials, u32 first, u32 last, u32 m,
                                             bool keep, float (&acc)[kTokenGroups][4],
                                             PartialWord (&last_words)[2 * kTokenGroups][2]) {
  constexpr u32 kPairs = 2 * kTokenGroups;
  constexpr u32 kBatch = kWordsInFlight / kPairs;
  // Whether CTA q's partial is loaded here, in a batch: every one up to `last`, or up to
  // the one before it where its words came earlier.
  const auto batched = [last](u32 q) { return kLastLoaded ? q < last : q <= last; };
#pragma unroll 1
  for (u32 q0 = first; batched(q0); q0 += kBatch) {
    PartialWord w[kBatch][kPairs][2];
#pragma unroll
    for (u32 j = 0; j < kBatch; ++j) {
      // A batch's words past `last` are never read; zeroed where kLastLoaded, as in the
      // 8-token build that item 128 measured.
      if (kLastLoaded) {
#pragma unroll
        for (u32 p = 0; p < kPairs; ++p) w[j][p][0] = w[j][p][1] = 0;
      }
      if (batched(q0 + j)) load_partial<kTokenGroups>(partials, q0 + j, m, w[j]);
    }
#pragma unroll
    for (u32 j = 0; j < kBatch; ++j) {
      if (!batched(q0 + j)) break;
      add_partial<kTokenGroups>(partials, q0 + j, m, keep, w[j], acc);
    }
  }
  if constexpr (kLastLoaded) {
    add_partial<kTokenGroups>(partials, last, m, keep, last_words, acc);
  } else {
    (void)last_words;
  }
}

// The tile's outputs from the registers of every compute thread.
template <u32 kTokenGroups>
__device__ __forceinline__ void store_tile(const Operands& op, u32 tile, const float (&acc)[kTokenGroups][4]) {
  const u32 warp = threadIdx.x / 32;
  const u32 lane = threadIdx.x % 32;
  const u32 g = lane / 4;
  const u32 t = lane % 4;
  const u32 n0 = tile * kRows;
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
}

// The CTAs whose ranges hold units of `tile`: c0 runs its first units, c1 its last.
struct Contributors {
  u32 c0, c1;
};

__device__ __forceinline__ Contributors contributors_of(const Work& wk, u32 tile) {
  const u64 units = static_cast<u64>(wk.k_blocks) * wk.tiles;
  return {owner_of(static_cast<u64>(tile) * wk.k_blocks, units, gridDim.x),
          owner_of(static_cast<u64>(tile) * wk.k_blocks + wk.k_blocks - 1, units, gridDim.x)};
}

// The 16-token build loads each K half's activations just before its MMAs
// (compute_block's kXByHalf: 84 registers instead of 96, 0.974-0.999x the time at 16
// tokens; docs/performance.md, item 143); the 8-token build gains nothing from it.
// STREAMK_X_BY_HALF=0 / 1 (a tuning point) chooses for both builds.
#if defined(STREAMK_X_BY_HALF)
constexpr bool kXByHalf = STREAMK_X_BY_HALF;
#else
constexpr bool kXByHalf = TOKEN_GROUPS == 2;
#endif

// How the compute warps wait for a stage. STREAMK_CONSUMER_SPIN (a tuning point) polls
// with mbarrier.test_wait, which never suspends the warp; STREAMK_CONSUMER_WAIT_HINT=N
// passes try_wait a suspend-time hint of N ns (docs/performance.md, item 130).
__device__ __forceinline__ void wait_for_stage(u32 bar, u32 parity) {
#if defined(STREAMK_CONSUMER_SPIN)
  asm volatile(
      "{\n\t.reg .pred done;\n"
      "SPIN:\n\t"
      "mbarrier.test_wait.parity.shared.b64 done, [%0], %1;\n\t"
      "@!done bra SPIN;\n\t}"
      :: "r"(bar), "r"(parity) : "memory");
#elif defined(STREAMK_CONSUMER_WAIT_HINT) && STREAM_TMA
  asm volatile(
      "{\n\t.reg .pred done;\n"
      "WAIT:\n\t"
      "mbarrier.try_wait.parity.shared.b64 done, [%0], %1, %2;\n\t"
      "@!done bra WAIT;\n\t}"
      :: "r"(bar), "r"(parity), "r"(static_cast<u32>(STREAMK_CONSUMER_WAIT_HINT)) : "memory");
#else
  barrier_wait(bar, parity);
#endif
}

// METRALE_DIAG_TIMELINE: one record of 8 words per CTA at word gridDim.x * 1024 + 8 * c
// of the workspace (past the first gridDim.x * 8 KiB, which the 32-bit partial words
// fill): [0] tag 0x544C in the top 16 bits, the grid size in bits 24-47, the CTA in
// bits 0-23; [1] the SM id, the CTA's units in bits 32-62, bit 63 set where it adds up a
// split tile; then %globaltimer (ns) at [2] entry, [3] the wait for the preceding grid
// done, [4] the first stage landed, [5] the last stage landed, [6] the loop's end, [7] the
// tile's reduction and store done (the loop's end where there is none).
#if defined(METRALE_DIAG_TIMELINE)
#if defined(STREAMK_PARTIAL_WORDS64)
#error "METRALE_DIAG_TIMELINE needs the 32-bit partial words (the workspace's second half)"
#endif
struct Timeline {
  u64* at;  // this CTA's record; null on threads that do not write one
  __device__ __forceinline__ void mark(u32 field) const {
    if (at != nullptr) at[field] = global_time_ns();
  }
  __device__ __forceinline__ void put(u32 field, u64 v) const {
    if (at != nullptr) at[field] = v;
  }
  __device__ __forceinline__ void put_work(u32 units, bool adds_up) const {
    put(1, (static_cast<u64>(adds_up) << 63) | (static_cast<u64>(units) << 32) | sm_id());
  }
};
__device__ __forceinline__ Timeline timeline_of(u64* partials) {
  if (threadIdx.x != 0) return {nullptr};
  return {partials + static_cast<u64>(gridDim.x) * 1024 + 8 * static_cast<u64>(blockIdx.x)};
}
#else
struct Timeline {
  __device__ __forceinline__ void mark(u32) const {}
  __device__ __forceinline__ void put_work(u32, bool) const {}
};
__device__ __forceinline__ Timeline timeline_of(u64*) { return {}; }
#endif

template <u32 kTokenGroups>
__device__ __forceinline__ void consume(const Operands& op, const Work& wk, const Ring& r,
                                        u64* partials) {
  const u32 warp = threadIdx.x / 32;
  const u32 lane = threadIdx.x % 32;
  const u32 count = wk.end - wk.begin;
  const FragmentOffsets<kTokenGroups> frag = fragment_offsets<kTokenGroups>(op.m, lane / 4, lane % 4,
                                                                             kTokenBytes);
  const u32 warp_w = 16 * warp * kBlockK;  // the warp's 16 rows of a unit

  float acc[kTokenGroups][4];
  u32 nan_bits[2] = {0, 0};
  set_zero(acc);

  // Outputs and the workspace are written only after the preceding grid has finished
  // (a programmatic dependent launch); the first stage cannot land before it anyway.
  wait_for_preceding_grid();
  const Timeline timeline = timeline_of(partials);
  timeline.mark(3);
  u32 tile = wk.first_tile;
  u32 kb = wk.begin % wk.k_blocks;
  u32 kb_first = kb;
  bool owns_split_tile = false;
  // The split tile this CTA adds up, if any (its range ends inside a tile that starts in
  // it): unit `early_at` of the range starts it, and there the last contributor's words
  // are loaded (load_partial). Up to 8 tokens: the 16-token build loads every partial
  // after the loop (add_partials with kLastLoaded false); with the early words it spilled
  // at 96 registers (item 128), and since item 143 fits them but takes 1.03x the time.
  // STREAMK_LATE_PARTIAL (a tuning point) does so in both builds,
  // STREAMK_EARLY_PARTIAL_ALL loads the last one early in both.
#if defined(STREAMK_LATE_PARTIAL)
  constexpr bool kEarly = false;
#elif defined(STREAMK_EARLY_PARTIAL_ALL)
  constexpr bool kEarly = true;
#else
  constexpr bool kEarly = kTokenGroups == 1;
#endif
  const u32 own_tile = (wk.end - 1) / wk.k_blocks;
  const bool adds_up = wk.end % wk.k_blocks != 0 && own_tile * wk.k_blocks >= wk.begin;
  const u32 early_at = kEarly && adds_up ? own_tile * wk.k_blocks - wk.begin : count;
  // Its contributors, found while the first stage is on its way rather than after the
  // last unit, where the end of the launch would wait on them.
  const Contributors own = adds_up ? contributors_of(wk, own_tile) : Contributors{0, 0};
  PartialWord early[2 * kTokenGroups][2] = {};
  // STREAMK_EARLY_RELEASE (a tuning point): each thread releases a slot as soon as it has
  // issued its reads of it, before its MMAs, so that the refill overlaps them. On two CTAs
  // per SM with 3 stages it took 0.98-1.00x the time at 16 tokens at 1ebc203, but
  // 1.05-1.09x on one CTA per SM; chosen at run time for 3 stages, the 16-token build lost
  // 0.4-2 % (median) on both grids (docs/performance.md, item 129); as a build of its own
  // for those rings, against the 16-token build as it ships, 1.007x without PDL and 0.995x
  // with it (median, item 133).
#if defined(STREAMK_EARLY_RELEASE)
  constexpr bool early_release = true;
#else
  constexpr bool early_release = false;
#endif
  // The slot and its phase as counters: i % stages and i / stages divide by a runtime
  // value, about 20 instructions a unit (docs/performance.md, item 109).
  u32 slot = 0;
  u32 phase = 0;
  for (u32 i = 0; i < count; ++i) {
    const u32 base = r.base + slot * r.stage_bytes;
#if !defined(METRALE_DIAG_NO_REDUCE)
    if (kEarly && i == early_at) {
      load_partial<kTokenGroups>(partials, own.c1, op.m, early);
    }
#endif
#if defined(METRALE_DIAG_COMPUTE_ONLY)
    if (i < r.stages) barrier_wait(r.full + 8 * slot, 0);
#else
    wait_for_stage(r.full + 8 * slot, phase);
#endif
    if (i == 0) timeline.mark(4);
    if (i == count - 1) timeline.mark(5);
    const float scale = load_shared_f32(r.scales + 4 * slot);
#if defined(METRALE_DEFECT_DROP_KBLOCK)
    const bool fold = kb != wk.k_blocks - 1 || wk.k_blocks == 1;
#else
    const bool fold = true;
#endif
    // Every compute thread releases its own reads of the slot (the scale included): the
    // producer's refill is ordered after each of them, not only after lane 0's.
#if defined(METRALE_DIAG_RING_ONLY)
    (void)frag; (void)warp_w; (void)base; (void)scale; (void)fold; (void)early_release;
    barrier_arrive(r.empty + 8 * slot);
#else
    if (early_release) {
      BlockWords<kTokenGroups> words;
      load_block<kTokenGroups>(words, frag, base + warp_w, base + kStageWeightBytes);
      barrier_arrive(r.empty + 8 * slot);
      mma_block<kTokenGroups>(acc, nan_bits, frag, words, scale, fold);
    } else {
      compute_block<kTokenGroups, kXByHalf>(acc, nan_bits, frag, base + warp_w,
                                            base + kStageWeightBytes, scale, fold);
      barrier_arrive(r.empty + 8 * slot);
    }
#endif
    if (kb == wk.k_blocks - 1 || i == count - 1) {
      poison_nan_columns<kTokenGroups>(acc, nan_bits);
      const bool whole = kb_first == 0 && kb == wk.k_blocks - 1;
#if defined(METRALE_DEFECT_SKIP_LAST_TILE)
      const bool skip = tile * kRows + kRows >= op.n;
#else
      const bool skip = false;
#endif
#if defined(METRALE_DIAG_NO_REDUCE)
      (void)whole;
      if (!skip) store_tile<kTokenGroups>(op, tile, acc);  // split tiles come out wrong
#else
      if (!skip) {
        if (whole) {
          store_tile<kTokenGroups>(op, tile, acc);
        } else if (kb_first != 0) {
          write_partial<kTokenGroups>(partials, op.m, keep_partials(op), acc);
        } else {
          // This CTA runs the tile's first units, at the end of its range: it keeps them
          // in its registers and adds the others' partials after the loop.
          owns_split_tile = true;
          break;
        }
      }
#endif
      set_zero(acc);
      nan_bits[0] = nan_bits[1] = 0;
      kb_first = 0;
    }
    if (++kb == wk.k_blocks) {
      kb = 0;
      ++tile;
    }
    next_slot(slot, phase, r.stages);
  }
  timeline.mark(6);
  timeline.put_work(count, owns_split_tile);
  if (owns_split_tile) {
#if !defined(METRALE_DIAG_REDUCE_NO_READ)
    add_partials<kTokenGroups, kEarly>(partials, own.c0 + 1, own.c1, op.m, keep_partials(op),
                                       acc, early);
#endif
    store_tile<kTokenGroups>(op, tile, acc);
  }
  timeline.mark(7);
}

}  // namespace

// STREAMK_MIN_CTAS (a tuning point): the launch bounds' CTAs per SM, which cap the registers.
#ifndef STREAMK_MIN_CTAS
#define STREAMK_MIN_CTAS 2
#endif
extern "C" __global__ void __launch_bounds__(kBlockThreads, STREAMK_MIN_CTAS)
w8a16_gemm_m16_streamk(const u16* __restrict__ input, const u8* __restrict__ weight,
                       const float* __restrict__ block_scale, u16* __restrict__ output, u32 m,
                       u32 n, u32 k, u32 a_row_stride, u32 c_row_stride,
                       u64* __restrict__ partials, u32 prefetch_stages,
                       const __grid_constant__ TensorMap w_map,
                       const __grid_constant__ TensorMap x_map) {
#if defined(METRALE_DIAG_TIMELINE)
  {
    const Timeline t = timeline_of(partials);
    t.mark(2);
    t.put(0, (u64{0x544C} << 48) | (static_cast<u64>(gridDim.x) << 24) | blockIdx.x);
  }
#endif
  extern __shared__ __align__(16) unsigned char dynamic_smem[];
  unsigned char* smem = ring_start(dynamic_smem);
  __shared__ __align__(8) u64 full[kMaxStages];
  __shared__ __align__(8) u64 empty[kMaxStages];
  __shared__ __align__(16) float scales[kMaxStages];
  const Operands op{input, weight, block_scale, output, m, n, k, a_row_stride, c_row_stride};
  Ring r;
  r.base = shared_address(smem);
  r.stage_bytes = kStageWeightBytes + m * kTokenBytes;
  r.stages = ring_stage_count(r.stage_bytes);
  r.full = shared_address(full);
  r.empty = shared_address(empty);
  r.scales = shared_address(scales);
  Work wk;
  wk.k_blocks = k / kBlockK;
  wk.tiles = (n + kRows - 1) / kRows;
  const u64 units = static_cast<u64>(wk.k_blocks) * wk.tiles;
  wk.begin = range_begin(blockIdx.x, units, gridDim.x);
  wk.end = range_begin(blockIdx.x + 1, units, gridDim.x);
  wk.first_tile = wk.begin / wk.k_blocks;
  // Every CTA is resident now: the next kernel of the stream may start its prologue.
  allow_dependent_grid();
  if (wk.begin == wk.end) return;
  if (threadIdx.x < r.stages) {
    barrier_init(r.full + 8 * threadIdx.x, kFullCount);
    barrier_init(r.empty + 8 * threadIdx.x, kComputeThreads);
  }
  barrier_init_fence();
  if (threadIdx.x >= kComputeThreads) {
    produce(op, wk, r, &w_map, &x_map, prefetch_stages);
  } else {
#if TOKEN_GROUPS == 1 || TOKEN_GROUPS == 2
    consume<TOKEN_GROUPS>(op, wk, r, partials);
#else
#error "build with TOKEN_GROUPS=1 (m <= 8) or TOKEN_GROUPS=2 (m in 9..16)"
#endif
  }
}
