// read_pattern: the read ceiling of the weight access pattern of the streaming GEMM
// kernels, against read_ceiling's contiguous stream. A layer of n rows x k bytes is read
// as units of 128 rows x `chunk` bytes, unit-major (128-row tile, then K), and a
// persistent grid splits the units evenly, CTA c taking [c U / P, (c+1) U / P): the
// order of w8a16_gemm_m16_streamk with `chunk` = 128. Wider chunks show what reading
// more contiguous bytes per row at once would give. `chunk` = 16384 reads the units of
// chunk 128 from the packed layout (each unit's 128 rows x 128 bytes stored contiguously,
// units in the same order; n a multiple of 128). Loads and L2 policy are those of the
// weight stream; everything read is XOR-folded and kept live as in read_ceiling.cu.
#include "metrale_device.cuh"

namespace {

// Not a XOR of 0x5A5A5A5A words (those give 0 or 0x5A5A5A5A).
constexpr u32 kNeverFolded = 0x9E3779B9u;

constexpr u32 kRows = 128;
constexpr u32 kMaxLoads = 16;  // per thread per unit: chunk / 32 with 256 threads, chunk <= 512

__device__ __forceinline__ u32 fold(uint4 v) { return v.x ^ v.y ^ v.z ^ v.w; }

}  // namespace

// Block: 256 threads; chunk a power of two in 128..512 dividing k, or 16384 (packed).
// Units go two at a time at chunk 128 and packed so that every thread keeps 8 loads in
// flight.
extern "C" __global__ void read_pattern(const u8* __restrict__ data, u32 n, u32 k, u32 chunk,
                                        u32* __restrict__ sink) {
  const bool packed = chunk == 16384;
  if (packed) chunk = 128;
  const u32 chunks_per_row = k / chunk;
  const u32 units = (n + kRows - 1) / kRows * chunks_per_row;
  const u32 begin = static_cast<u32>(static_cast<u64>(blockIdx.x) * units / gridDim.x);
  const u32 end = static_cast<u32>(static_cast<u64>(blockIdx.x + 1) * units / gridDim.x);
  const u32 pieces_per_row = chunk / 16;
  const u32 loads = chunk / 32;            // this thread's 16-byte pieces of a unit
  const u32 step = chunk == 128 ? 2 : 1;   // units per iteration
  const u64 policy = l2_evict_first_policy();
  u32 acc = 0;
  for (u32 u0 = begin; u0 < end; u0 += step) {
    uint4 v[kMaxLoads];
#pragma unroll
    for (u32 j = 0; j < kMaxLoads; ++j) {
      v[j] = make_uint4(0, 0, 0, 0);
      const u32 u = u0 + (step == 2 ? j / 4 : 0);
      const u32 piece = threadIdx.x + (step == 2 ? j % 4 : j) * 256;
      if ((step == 2 ? j >= 8 : j >= loads) || u >= end) continue;
      const u64 row = static_cast<u64>(u / chunks_per_row) * kRows + piece / pieces_per_row;
      if (row >= n) continue;
      const u64 col = static_cast<u64>(u % chunks_per_row) * chunk + 16 * (piece % pieces_per_row);
      const u64 offset = packed ? static_cast<u64>(u) * 16384 + 16 * piece : row * k + col;
      v[j] = load_stream_16(data + offset, policy);
    }
#pragma unroll
    for (u32 j = 0; j < kMaxLoads; ++j) acc ^= fold(v[j]);
  }
#pragma unroll
  for (u32 offset = 16; offset > 0; offset >>= 1) acc ^= __shfl_xor_sync(0xFFFFFFFFu, acc, offset);
  // Stored only when the fold takes a value the benchmark's fill (0x5A bytes) never
  // gives: the loads stay live, and the launch does not end in thousands of atomics on
  // one word, which serialize in L2 and cost microseconds at a small layer's size.
  if ((threadIdx.x & 31u) == 0 && acc == kNeverFolded) *sink = acc;
}
