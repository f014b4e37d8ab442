// The C ABI's helpers for examples and checks: random fills with the library's own
// fill kernels, device memory and copies, and the accuracy oracle.
#include <algorithm>
#include <cstdint>
#include <string_view>

#include "c_api_internal.hpp"
#include "metrale/host_reference.hpp"
#include "metrale/kernel_launch.hpp"
#include "metrale/kernels.h"
#include "metrale/oracle.hpp"

namespace {

using metrale::CudaBackend;
using metrale::DevicePtr;
using metrale::GpuBackend;
using metrale::KernelHandle;
using metrale::KernelLaunch;
using metrale::capi::require;
using metrale::capi::run;

constexpr std::uint32_t kFillThreads = 256;
// Enough CTAs to fill any H200-class GPU; the kernels loop over the rest.
constexpr std::uint32_t kFillMaxBlocks = 4096;

// Checks a fill's destination and count, then launches `entry` with (out, count, seed)
// followed by the extra arguments `more` pushes.
template <typename More>
metrale_status fill(metrale_service* service, std::string_view fn, const char* entry,
                    std::uint64_t out, std::uint32_t count, std::uint32_t seed,
                    std::uint64_t alignment, void* stream, More&& more) noexcept {
  return metrale::capi::launch_entry(
      service, fn, entry, [&](const GpuBackend& gpu, KernelHandle kernel) {
        metrale::ensure(out != 0, "{}: out is a null device pointer", fn);
        metrale::ensure(out % alignment == 0, "{}: out=0x{:x} is not {}-byte aligned", fn, out,
                        alignment);
        metrale::ensure(count >= 1, "{}: count=0: nothing to fill", fn);
        const std::uint32_t blocks =
            std::min(metrale::div_ceil(count, kFillThreads), kFillMaxBlocks);
        KernelLaunch launch(gpu, kernel);
        launch.grid({blocks, 1, 1}).block({kFillThreads, 1, 1});
        launch.arg_ptr(DevicePtr(out)).arg_u32(count).arg_u32(seed);
        more(launch);
        launch.launch(metrale::capi::stream_handle(stream));
      });
}

// The device backend of a service: METRALE_ERROR_NO_DEVICE on a compile-only one, then
// the phase moves on to the driver call.
CudaBackend& device_of(metrale_service* service, std::string_view fn, metrale_status& phase) {
  metrale::KernelService& svc = metrale::capi::service(service, fn);
  phase = METRALE_ERROR_NO_DEVICE;
  CudaBackend& backend = svc.backend();
  phase = METRALE_ERROR_CUDA;
  return backend;
}

}  // namespace

extern "C" {

metrale_status metrale_fill_random_bf16(metrale_service* service, uint64_t out, uint32_t count,
                                        uint32_t seed, float scale, void* stream) noexcept {
  return fill(service, "metrale_fill_random_bf16", "fill_random_bf16", out, count, seed, 2, stream,
              [&](KernelLaunch& l) { l.arg_f32(scale); });
}

metrale_status metrale_fill_random_fp8(metrale_service* service, uint64_t out, uint32_t count,
                                       uint32_t seed, uint32_t max_magnitude,
                                       void* stream) noexcept {
  return fill(service, "metrale_fill_random_fp8", "fill_random_fp8", out, count, seed, 1, stream,
              [&](KernelLaunch& l) { l.arg_u32(max_magnitude); });
}

metrale_status metrale_fill_random_f32(metrale_service* service, uint64_t out, uint32_t count,
                                       uint32_t seed, float lo, float hi, void* stream) noexcept {
  return fill(service, "metrale_fill_random_f32", "fill_random_f32", out, count, seed, 4, stream,
              [&](KernelLaunch& l) { l.arg_f32(lo).arg_f32(hi); });
}

metrale_status metrale_alloc(metrale_service* service, size_t bytes, uint64_t* out) noexcept {
  return run([&](metrale_status& phase) {
    require(out, "metrale_alloc", "out");
    *out = 0;
    CudaBackend& gpu = device_of(service, "metrale_alloc", phase);
    *out = gpu.allocate(bytes).address;
  });
}

metrale_status metrale_free(metrale_service* service, uint64_t ptr) noexcept {
  return run([&](metrale_status& phase) {
    // cuMemFree failures are logged by the backend: there is nothing a caller can do.
    device_of(service, "metrale_free", phase).release(DevicePtr(ptr));
  });
}

metrale_status metrale_upload(metrale_service* service, uint64_t dst, const void* src,
                              size_t bytes) noexcept {
  return run([&](metrale_status& phase) {
    if (bytes > 0) {
      require(src, "metrale_upload", "src");
      metrale::ensure(dst != 0, "metrale_upload: dst is a null device pointer");
    }
    device_of(service, "metrale_upload", phase).upload(DevicePtr(dst), src, bytes);
  });
}

metrale_status metrale_download(metrale_service* service, void* dst, uint64_t src,
                                size_t bytes) noexcept {
  return run([&](metrale_status& phase) {
    if (bytes > 0) {
      require(dst, "metrale_download", "dst");
      metrale::ensure(src != 0, "metrale_download: src is a null device pointer");
    }
    device_of(service, "metrale_download", phase).download(dst, DevicePtr(src), bytes);
  });
}

metrale_status metrale_synchronize(metrale_service* service) noexcept {
  return run([&](metrale_status& phase) {
    device_of(service, "metrale_synchronize", phase).synchronize();
  });
}

float metrale_bf16_to_float(uint16_t bits) noexcept { return metrale::bf16_to_float(bits); }

int metrale_within_m16_tc_budget(float got, float ref, uint32_t k, double row_rms) noexcept {
  return metrale::within_m16_tc_budget(got, ref, k, row_rms) ? 1 : 0;
}

}  // extern "C"
