// read_pattern_tma: the read ceiling of a ring of tensor copies over the weights, for box
// shapes other than the 128 rows x 128 bytes that w8a16_gemm_m16_streamk copies per
// stage, with nothing consuming the ring. A layer of n rows x k bytes is read as units of
// box_rows rows x box_bytes bytes, tile-major (a tile of box_rows rows, then K), and a
// persistent grid splits the units evenly, CTA c taking [c U / P, (c+1) U / P): the order
// of stream-K. With `chunks` > 0 the units are split into that many ranges instead, which
// the CTAs claim one after another from a counter as they need them: what the same ring
// streams when an SM that the memory system serves faster takes more of the layer. One
// thread per CTA keeps `stages` boxes in flight and issues the next box into a slot as
// soon as the slot's box has landed, across range boundaries. Copies carry the weights'
// L2 evict-first policy; one word of every landed box is XOR-folded and kept live.
#include "m16_stream_pipeline.cuh"

namespace {

// Not a XOR of 0x5A5A5A5A words (those give 0 or 0x5A5A5A5A).
constexpr u32 kNeverFolded = 0x9E3779B9u;

__device__ __forceinline__ u32 load_shared_u32(u32 addr) {
  u32 v;
  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(addr) : "memory");
  return v;
}

}  // namespace

// Block: 32 threads (lane 0 works). map: the layer as rows of k bytes, in elements of
// `element_bytes` (1, or 2 for boxes over 256 bytes), boxes of box_bytes x box_rows.
// Dynamic shared memory: 128 + stages * box_rows * box_bytes; stages <= kMaxStages.
// counters: two words, zero before the launch and left zero by its last CTA (claimed
// ranges, CTAs done); untouched when chunks is 0.
extern "C" __global__ void read_pattern_tma(u32 n, u32 k, u32 box_rows, u32 box_bytes,
                                            u32 element_bytes, u32 stages, u32 chunks,
                                            u32* __restrict__ counters, u32* __restrict__ sink,
                                            const __grid_constant__ TensorMap map) {
#if STREAM_TMA
  extern __shared__ __align__(16) unsigned char dynamic_smem[];
  __shared__ __align__(8) u64 full[kMaxStages];
  if (threadIdx.x != 0) return;
  const u32 base = shared_address(ring_start(dynamic_smem));
  const u32 box = box_rows * box_bytes;
  const u32 parts = k / box_bytes;
  const u64 units = static_cast<u64>((n + box_rows - 1) / box_rows) * parts;
  const u32 bars = shared_address(full);
  for (u32 s = 0; s < stages; ++s) barrier_init(bars + 8 * s, 1);
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  const u64 policy = l2_evict_first_policy();
  // The next unit to issue: u of the current range [u, end), then the next range claimed.
  const u32 ranges = chunks != 0 ? chunks : gridDim.x;
  u32 u = 0, end = 0;
  bool claimed_last = chunks == 0;  // the static split: this CTA's one range
  if (chunks == 0) {
    u = static_cast<u32>(blockIdx.x * units / ranges);
    end = static_cast<u32>((blockIdx.x + 1) * units / ranges);
  }
  const auto next_unit = [&](u32& unit) {
    while (u == end) {
      if (claimed_last) return false;
      const u32 c = atomicAdd(&counters[0], 1u);
      if (c >= ranges) {
        claimed_last = true;
        return false;
      }
      u = static_cast<u32>(c * units / ranges);
      end = static_cast<u32>((c + 1) * units / ranges);
    }
    unit = u++;
    return true;
  };
  const auto issue = [&](u32 i, u32 unit) {
    const u32 bar = bars + 8 * (i % stages);
    barrier_expect(bar, box);
    tensor_copy(base + (i % stages) * box, &map, (unit % parts) * box_bytes / element_bytes,
                unit / parts * box_rows, bar, policy);
  };
  u32 issued = 0, unit = 0;
  while (issued < stages && next_unit(unit)) issue(issued++, unit);
  u32 acc = 0;
  for (u32 i = 0; i < issued; ++i) {
    barrier_wait(bars + 8 * (i % stages), (i / stages) & 1);
    acc ^= load_shared_u32(base + (i % stages) * box);
    if (next_unit(unit)) issue(issued++, unit);
  }
  if (acc == kNeverFolded) *sink = acc;
  if (chunks != 0) {
    // Every claim of this CTA is in before it counts itself done; the last one done leaves
    // both counters zero for the next launch.
    __threadfence();
    if (atomicAdd(&counters[1], 1u) == gridDim.x - 1) {
      counters[0] = 0;
      counters[1] = 0;
    }
  }
#else
  (void)n; (void)k; (void)box_rows; (void)box_bytes; (void)element_bytes; (void)stages;
  (void)chunks; (void)counters; (void)map;
  if (threadIdx.x == 0 && blockIdx.x == 0) *sink = 0xFFFFFFFFu;  // no tensor copies here
#endif
}
