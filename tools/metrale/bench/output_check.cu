// The benchmark's check of every launch of a graph: each launch wrote its own 16-row block
// of outputs, held here to the scalar reference on the weights it read, with the library's
// accuracy contract (within_m16_tc_budget, runtime/oracle.cpp), on the device, so that a
// graph of hundreds of launches is checked in one kernel instead of on the host.
#include "metrale_device.cuh"

namespace {

constexpr u32 kMaxUlp = 2;                          // M16_TC_MAX_ULP
constexpr double kFloorMargin = 8.0;                // M16_TC_ACC_FLOOR_MARGIN
constexpr double kUnitRoundoff = 1.0 / 16777216.0;  // F32_UNIT_ROUNDOFF, 2^-24
constexpr u16 kPoison = 0xFFFF;                     // the runner's BF16 NaN
constexpr u32 kThreads = 256;

// BF16 bits mapped to integers that increase with the value (-0 and +0 coincide).
__device__ __forceinline__ int ordered(u16 bits) {
  return (bits & 0x8000u) != 0 ? -static_cast<int>(bits & 0x7FFFu) : static_cast<int>(bits);
}

__device__ __forceinline__ bool within_budget(u16 got, u16 ref, double floor) {
  const float g = bf16_to_f32(got);
  const float r = bf16_to_f32(ref);
  if (isnan(g) || isnan(r)) return false;
  if (isinf(g) || isinf(r)) return g == r;
  if (fabs(static_cast<double>(g) - static_cast<double>(r)) <= floor) return true;
  const int d = ordered(got) - ordered(ref);
  return static_cast<u32>(d < 0 ? -d : d) <= kMaxUlp;
}

__device__ double block_sum(double v, double* scratch) {
  scratch[threadIdx.x] = v;
  __syncthreads();
  for (u32 half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) scratch[threadIdx.x] += scratch[threadIdx.x + half];
    __syncthreads();
  }
  const double sum = scratch[0];
  __syncthreads();
  return sum;
}

}  // namespace

// Grid: (16, copies)  Block: (256, 1, 1). CTA (row, c) checks row `row` of launch c's block
// got[c][16][n]: below m against ref[c][m][n] (the reference on copy c's weights), from m on
// against the poison, which the launch must not have touched. result[0] += the failures;
// result[1] = min(its own, the lowest failing index c * 16 * n + row * n + col).
extern "C" __global__ void __launch_bounds__(kThreads)
check_outputs(const u16* __restrict__ got, const u16* __restrict__ ref, u32 m, u32 n, u32 k,
              unsigned long long* __restrict__ result) {
  __shared__ double scratch[kThreads];
  const u32 row = blockIdx.x;
  const u64 copy = blockIdx.y;
  const u16* g = got + (copy * 16 + row) * n;
  unsigned long long failures = 0;
  unsigned long long first = ~0ull;
  if (row < m) {
    const u16* r = ref + (copy * m + row) * n;
    double sum_sq = 0.0;
    for (u32 j = threadIdx.x; j < n; j += kThreads) {
      const double v = bf16_to_f32(r[j]);
      sum_sq += v * v;
    }
    const double row_rms = sqrt(block_sum(sum_sq, scratch) / n);
    const double floor = kFloorMargin * kUnitRoundoff * sqrt(static_cast<double>(k)) * row_rms;
    for (u32 j = threadIdx.x; j < n; j += kThreads) {
      if (!within_budget(g[j], r[j], floor)) {
        ++failures;
        if (first == ~0ull) first = (copy * 16 + row) * n + j;
      }
    }
  } else {
    for (u32 j = threadIdx.x; j < n; j += kThreads) {
      if (g[j] != kPoison) {
        ++failures;
        if (first == ~0ull) first = (copy * 16 + row) * n + j;
      }
    }
  }
  if (failures != 0) {
    atomicAdd(&result[0], failures);
    atomicMin(&result[1], first);
  }
}
