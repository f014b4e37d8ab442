// read_pattern: the read ceiling of the weight access pattern of the streaming GEMM
// kernels, against read_ceiling's contiguous stream. A layer of n rows x k bytes is read
// as units of 128 rows x `chunk` bytes, unit-major (128-row tile, then K), and a
// persistent grid splits the units evenly, CTA c taking [c U / P, (c+1) U / P): the
// order of w8a16_gemm_m16_streamk with `chunk` = 128. Wider chunks show what reading
// more contiguous bytes per row at once would give. Loads and L2 policy are those of
// the weight stream; everything read is XOR-folded into *sink.
#include "metrale_device.cuh"

namespace {

constexpr u32 kLoadsInFlight = 8;
constexpr u32 kRows = 128;

__device__ __forceinline__ u32 fold(uint4 v) { return v.x ^ v.y ^ v.z ^ v.w; }

}  // namespace

extern "C" __global__ void read_pattern(const u8* __restrict__ data, u32 n, u32 k, u32 chunk,
                                        u32* __restrict__ sink) {
  const u32 pieces_per_row = chunk / 16;
  const u32 pieces_per_unit = kRows * pieces_per_row;
  const u32 chunks_per_row = k / chunk;
  const u64 units = static_cast<u64>((n + kRows - 1) / kRows) * chunks_per_row;
  const u64 begin = blockIdx.x * units / gridDim.x * pieces_per_unit;
  const u64 end = (blockIdx.x + 1) * units / gridDim.x * pieces_per_unit;
  const u64 policy = l2_evict_first_policy();
  u32 acc = 0;
  for (u64 p0 = begin + threadIdx.x; p0 < end; p0 += kLoadsInFlight * blockDim.x) {
    uint4 v[kLoadsInFlight];
#pragma unroll
    for (u32 j = 0; j < kLoadsInFlight; ++j) {
      const u64 p = p0 + j * blockDim.x;
      v[j] = make_uint4(0, 0, 0, 0);
      if (p >= end) continue;
      const u64 unit = p / pieces_per_unit;
      const u32 q = static_cast<u32>(p % pieces_per_unit);
      const u64 row = unit / chunks_per_row * kRows + q / pieces_per_row;
      if (row >= n) continue;
      const u64 col = unit % chunks_per_row * chunk + 16 * (q % pieces_per_row);
      v[j] = load_stream_16(data + row * k + col, policy);
    }
#pragma unroll
    for (u32 j = 0; j < kLoadsInFlight; ++j) acc ^= fold(v[j]);
  }
#pragma unroll
  for (u32 offset = 16; offset > 0; offset >>= 1) acc ^= __shfl_xor_sync(0xFFFFFFFFu, acc, offset);
  if ((threadIdx.x & 31u) == 0) atomicXor(sink, acc);
}
