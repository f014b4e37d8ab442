#include "metrale/fill_random.hpp"

#include <algorithm>

#include "metrale/error.hpp"
#include "metrale/kernel_launch.hpp"

namespace metrale {
namespace {

KernelLaunch fill_launch(ModuleCache& cache, const char* entry, DevicePtr out,
                         std::uint32_t count) {
  ensure(out.address != 0, "{}: out is a null device pointer", entry);
  KernelLaunch launch(cache.backend(), cache.kernel(entry));
  // Enough CTAs to fill the device; the grid-stride loop covers the rest.
  launch.grid({std::clamp<std::uint32_t>(div_ceil(count, 256), 1, 2048), 1, 1})
      .block({256, 1, 1})
      .arg_ptr(out)
      .arg_u32(count);
  return launch;
}

}  // namespace

void fill_random_bf16(ModuleCache& cache, DevicePtr out, std::uint32_t count,
                      std::uint32_t seed, float scale, StreamHandle stream) {
  fill_launch(cache, "fill_random_bf16", out, count).arg_u32(seed).arg_f32(scale).launch(stream);
}

void fill_random_fp8(ModuleCache& cache, DevicePtr out, std::uint32_t count,
                     std::uint32_t seed, std::uint32_t max_magnitude, StreamHandle stream) {
  ensure(max_magnitude <= 0x7E, "fill_random_fp8: max_magnitude=0x{:x} would include NaN codes",
         max_magnitude);
  fill_launch(cache, "fill_random_fp8", out, count)
      .arg_u32(seed)
      .arg_u32(max_magnitude)
      .launch(stream);
}

void fill_random_f32(ModuleCache& cache, DevicePtr out, std::uint32_t count,
                     std::uint32_t seed, float lo, float hi, StreamHandle stream) {
  fill_launch(cache, "fill_random_f32", out, count).arg_u32(seed).arg_f32(lo).arg_f32(hi).launch(stream);
}

void fill_u16(ModuleCache& cache, DevicePtr out, std::uint32_t count, std::uint16_t value,
              StreamHandle stream) {
  fill_launch(cache, "fill_u16", out, count).arg_u32(value).launch(stream);
}

}  // namespace metrale
