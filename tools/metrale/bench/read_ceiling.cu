// read_ceiling: the device's read-only streaming ceiling, the denominator of every
// "% of ceiling" the benchmark prints. It reads the same way the GEMM kernels read
// their weights (ld.global.nc.L1::no_allocate, 16 bytes per load) and does nothing
// else, so what it reaches is what HBM gives a pure reader.
//
// Each thread keeps kLoadsInFlight independent 16-byte loads outstanding per iteration;
// with several 256-thread CTAs per SM that is >= 64 KiB in flight per SM, which the
// H200 needs to saturate HBM. Consecutive threads read consecutive 16-byte words, so
// every warp request is fully coalesced.
//
// Everything read is XOR-folded into one word per warp, stored to *sink only if it takes
// a value the fill never gives, so no load can be removed as dead.
#include "metrale_device.cuh"

namespace {

// Not a XOR of 0x5A5A5A5A words (those give 0 or 0x5A5A5A5A).
constexpr u32 kNeverFolded = 0x9E3779B9u;

constexpr u32 kLoadsInFlight = 8;

__device__ __forceinline__ u32 fold(uint4 v) { return v.x ^ v.y ^ v.z ^ v.w; }

}  // namespace

extern "C" __global__ void read_ceiling(const uint4* __restrict__ data, u32 count,
                                        u32* __restrict__ sink) {
  const u64 stride = static_cast<u64>(gridDim.x) * blockDim.x;
  u64 i = static_cast<u64>(blockIdx.x) * blockDim.x + threadIdx.x;
  u32 acc = 0;
  // The same loads and L2 policy as the kernels' weight stream.
  const u64 policy = l2_evict_first_policy();
  // Every pass issues its kLoadsInFlight loads together, the last pass too (its loads
  // past the end predicated off): a tail of single loads, each waiting for the one
  // before, would add a round trip per load, and a layer of under 8 x grid x 16 bytes
  // would be nothing but tail.
  for (; i < count; i += kLoadsInFlight * stride) {
    uint4 v[kLoadsInFlight];
#pragma unroll
    for (u32 j = 0; j < kLoadsInFlight; ++j) {
      const u64 at = i + j * stride;
      v[j] = at < count ? load_stream_16(data + at, policy) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (u32 j = 0; j < kLoadsInFlight; ++j) acc ^= fold(v[j]);
  }
#pragma unroll
  for (u32 offset = 16; offset > 0; offset >>= 1) acc ^= __shfl_xor_sync(0xFFFFFFFFu, acc, offset);
  // Stored only when the fold takes a value the benchmark's fill (0x5A bytes) never
  // gives: the loads stay live, and the launch does not end in thousands of atomics on
  // one word, which serialize in L2 and cost microseconds at a small layer's size.
  if ((threadIdx.x & 31u) == 0 && acc == kNeverFolded) *sink = acc;
}
