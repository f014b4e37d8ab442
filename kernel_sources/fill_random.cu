// Device-side fills for tests, examples and the benchmark: reproducible pseudo-random
// operands (a counter hash of (seed, index), so any element can be regenerated on the
// host) and constant fills used to poison outputs. Grid-stride loops; any grid works.
#include "metrale_device.cuh"

namespace {

// splitmix-style 32-bit mix of (seed, index).
__device__ __forceinline__ u32 hash(u32 seed, u32 index) {
  u32 x = index * 0x9E3779B9u ^ (seed * 0x85EBCA6Bu + 0x27D4EB2Fu);
  x ^= x >> 16;
  x *= 0x7FEB352Du;
  x ^= x >> 15;
  x *= 0x846CA68Bu;
  x ^= x >> 16;
  return x;
}

// The grid-stride loop's indices. The step ends the loop where it would pass `count`: a
// plain i += stride wraps in 32 bits for a count near 2^32 and never ends.
__device__ __forceinline__ u32 first_index() { return blockIdx.x * blockDim.x + threadIdx.x; }

__device__ __forceinline__ u32 next_index(u32 i, u32 count) {
  const u32 stride = gridDim.x * blockDim.x;
  return count - i > stride ? i + stride : count;
}

// Uniform in [0, 1) with 24 random bits.
__device__ __forceinline__ float unit(u32 h) { return static_cast<float>(h >> 8) * (1.0f / 16777216.0f); }

}  // namespace

// BF16 values uniform in [-scale, scale).
extern "C" __global__ void fill_random_bf16(u16* out, u32 count, u32 seed, float scale) {
  for (u32 i = first_index(); i < count; i = next_index(i, count)) {
    out[i] = f32_to_bf16_rn((2.0f * unit(hash(seed, i)) - 1.0f) * scale);
  }
}

// E4M3 codes with magnitude code <= max_magnitude (0x7E = every finite value), random
// sign; never a NaN code.
extern "C" __global__ void fill_random_fp8(u8* out, u32 count, u32 seed, u32 max_magnitude) {
  for (u32 i = first_index(); i < count; i = next_index(i, count)) {
    const u32 h = hash(seed, i);
    const u32 mag = (h >> 8) % (max_magnitude + 1u);
    out[i] = static_cast<u8>(mag | (h & 0x80u));
  }
}

// FP32 values uniform in [lo, hi).
extern "C" __global__ void fill_random_f32(float* out, u32 count, u32 seed, float lo, float hi) {
  for (u32 i = first_index(); i < count; i = next_index(i, count)) {
    out[i] = lo + (hi - lo) * unit(hash(seed, i));
  }
}

// Every element set to `value` (poison before a run).
extern "C" __global__ void fill_u16(u16* out, u32 count, u32 value) {
  for (u32 i = first_index(); i < count; i = next_index(i, count)) {
    out[i] = static_cast<u16>(value);
  }
}
