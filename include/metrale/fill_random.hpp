// Launchers for kernel_sources/fill_random.cu: reproducible device-side random operands
// and constant fills (output poison) for tests, examples and the benchmark. `count` is
// in elements; the kernels use grid-stride loops.
#pragma once

#include <cstdint>

#include "metrale/gpu_backend.hpp"
#include "metrale/module_cache.hpp"

namespace metrale {

// BF16 uniform in [-scale, scale).
void fill_random_bf16(ModuleCache& cache, DevicePtr out, std::uint32_t count,
                      std::uint32_t seed, float scale, StreamHandle stream = 0);

// E4M3 codes of magnitude code <= max_magnitude (0x7E: every finite value), random sign.
void fill_random_fp8(ModuleCache& cache, DevicePtr out, std::uint32_t count,
                     std::uint32_t seed, std::uint32_t max_magnitude, StreamHandle stream = 0);

// FP32 uniform in [lo, hi).
void fill_random_f32(ModuleCache& cache, DevicePtr out, std::uint32_t count,
                     std::uint32_t seed, float lo, float hi, StreamHandle stream = 0);

// Every 16-bit element set to `value`.
void fill_u16(ModuleCache& cache, DevicePtr out, std::uint32_t count, std::uint16_t value,
              StreamHandle stream = 0);

}  // namespace metrale
