// The C ABI (include/metrale/kernels.h): status and errors, the service handle, the
// launchers, the dense FFN and the QKV projection. Each entry runs the C++ launcher
// itself, so its checks and messages are exactly those of the C++ API.
#include <string>
#include <vector>

#include "c_api_internal.hpp"
#include "launch_guards.hpp"
#include "metrale/dense_ffn.hpp"
#include "metrale/kernel_launch.hpp"
#include "metrale/kernel_variants.hpp"
#include "metrale/kernels.h"
#include "metrale/m16_plan.hpp"
#include "metrale/w8a16_gemm_m16.hpp"
#include "metrale/w8a16_gemm_m16_auto.hpp"
#include "metrale/w8a16_gemm_m16_skinny.hpp"
#include "metrale/w8a16_gemm_m16_splitk.hpp"
#include "metrale/w8a16_gemm_m16_streamk.hpp"
#include "metrale/w8a16_gemv_batch16.hpp"

#ifndef METRALE_VERSION_STRING
#error "METRALE_VERSION_STRING is set by runtime/CMakeLists.txt"
#endif

namespace metrale::capi {
namespace {

thread_local std::string t_message;
// Set when recording a message failed for lack of memory; a literal never fails.
thread_local const char* t_fallback = nullptr;

}  // namespace

void set_last_error(std::string_view message) noexcept {
  try {
    t_message.assign(message);
    t_fallback = nullptr;
  } catch (...) {
    t_fallback = "out of host memory while recording the error message";
  }
}

KernelService& service(metrale_service* handle, std::string_view fn) {
  if (handle == nullptr) fail("{}: service is NULL", fn);
  return handle->service;
}

void require(const void* pointer, std::string_view fn, std::string_view what) {
  if (pointer == nullptr) fail("{}: {} is NULL", fn, what);
}

std::unique_ptr<LoadedModule> GuardOnlyGpu::load_module(std::span<const char> image,
                                                        std::string_view label) const {
  (void)image;
  fail("internal: a guard pass loads no module ({})", label);
}

}  // namespace metrale::capi

using metrale::DevicePtr;
using metrale::GpuBackend;
using metrale::KernelHandle;
using metrale::KernelService;
using metrale::capi::launch_entry;
using metrale::capi::require;
using metrale::plan_device;
using metrale::plan_sm_count;
using metrale::capi::run;
using metrale::capi::stream_handle;

namespace {

// The plan without PDL, for a shape the launchers accept (a refused one is an invalid
// argument, under the C function's name `fn`). metrale_w8a16_gemm_m16_skinny_deep takes no
// workspace, so the plan that names it keeps the deep entry on one chunk; the plan for
// callers with a workspace (`chunked`) is plan_m16_gemm itself.
metrale::M16Plan device_plan(std::string_view fn, metrale::KernelService& svc, uint32_t m,
                             uint32_t n, uint32_t k, bool chunked = false) {
  metrale::guards::check_shape(fn, m, n, k);
  const metrale::M16PlanDevice device = plan_device(svc);
  return chunked ? metrale::plan_m16_gemm(m, n, k, device)
                 : metrale::plan_m16_gemm_one_chunk_deep(m, n, k, device);
}

// Whether `plan` runs the deep entry in chunks of K (metrale_w8a16_gemm_m16_skinny_deep_chunked).
bool deep_in_chunks(const metrale::M16Plan& plan, uint32_t k) {
  return plan.entry == "w8a16_gemm_m16_skinny_deep" &&
         metrale::w8a16_gemm_m16_skinny_chunks(k, plan.warps, plan.warp_blocks) > 1;
}

// How the C deep functions launch the deep kernel: the kernel, warps and blocks per warp.
struct DeepLaunch {
  std::string_view kernel;
  std::uint32_t warps;
  std::uint32_t warp_blocks;
};

// The deep entry as plan_m16_gemm (without PDL) runs it: for a `chunked` caller the plan's
// chunks of K where the plan takes them; else one chunk as the plan runs the deep entry
// where it picks it, and in the form the plan gives the deep entry where it does not (the
// 32-row form above 8 tokens where it suits the shape).
DeepLaunch deep_launch(metrale::KernelService& svc, uint32_t m, uint32_t n, uint32_t k,
                       bool chunked) {
  const metrale::M16PlanDevice device = plan_device(svc);
  const std::uint32_t sms = device.sm_count;
  if (chunked) {
    const metrale::M16Plan plan = metrale::plan_m16_gemm(m, n, k, device);
    if (deep_in_chunks(plan, k)) return {plan.entry, plan.warps, plan.warp_blocks};
  }
  const metrale::M16Plan one_chunk = metrale::plan_m16_gemm_one_chunk_deep(m, n, k, device);
  if (one_chunk.entry.starts_with("w8a16_gemm_m16_skinny_deep")) {
    return {one_chunk.entry, one_chunk.warps, one_chunk.warp_blocks};
  }
  const metrale::SkinnyDeepForm form =
      metrale::w8a16_gemm_m16_skinny_deep32_form(m, n, k, sms, false)
          .value_or(metrale::w8a16_gemm_m16_skinny_deep_form(m, n, sms));
  return {form.kernel, form.warps,
          metrale::w8a16_gemm_m16_skinny_deep_one_chunk_blocks(k, form.warps)};
}

metrale_status launch_deep(metrale_service* service, std::string_view fn, uint64_t input,
                           uint64_t weight, uint64_t block_scale, uint64_t output, uint32_t m,
                           uint32_t n, uint32_t k, uint32_t a_row_stride, uint32_t c_row_stride,
                           metrale::StreamKWorkspace workspace, bool chunked, void* stream) {
  return metrale::capi::run([&](metrale_status& phase) {
    metrale::KernelService& svc = metrale::capi::service(service, fn);
    const DeepLaunch form = deep_launch(svc, m, n, k, chunked);
    const auto launch = [&](const GpuBackend& gpu, KernelHandle kernel) {
      metrale::w8a16_gemm_m16_skinny_deep(gpu, kernel, DevicePtr(input), DevicePtr(weight),
                                          DevicePtr(block_scale), DevicePtr(output), m, n, k,
                                          a_row_stride, c_row_stride, workspace, form.warps,
                                          form.warp_blocks, metrale::capi::stream_handle(stream));
    };
    // The form's kernel (the 32-row one is a module of its own) is compiled on first use:
    // an error there is a compile error.
    const std::string name(form.kernel);
    const KernelHandle kernel =
        metrale::capi::kernel_after_guards(svc, name.c_str(), phase, launch);
    launch(metrale::capi::TrackedGpu(svc.gpu(), svc.compile_only(), phase), kernel);
  });
}

// The C function that runs `plan`: one per entry the plan can name; the streaming entry has
// none, and split-K with the same split stands in for it. The deep entry in chunks of K
// (a `chunked` plan only) is metrale_w8a16_gemm_m16_skinny_deep_chunked.
const char* c_function(std::string_view fn, const metrale::M16Plan& plan, uint32_t k) {
  if (deep_in_chunks(plan, k)) return "metrale_w8a16_gemm_m16_skinny_deep_chunked";
  struct Named {
    std::string_view entry;
    const char* c_function;
  };
  static constexpr Named kNames[] = {
      {"w8a16_gemm_m16", "metrale_w8a16_gemm_m16"},
      {"w8a16_gemm_m16_n64", "metrale_w8a16_gemm_m16_n64"},
      {"w8a16_gemm_m16_splitk", "metrale_w8a16_gemm_m16_splitk"},
      {"w8a16_gemm_m16_stream", "metrale_w8a16_gemm_m16_splitk"},
      {"w8a16_gemm_m16_streamk", "metrale_w8a16_gemm_m16_streamk"},
      {"w8a16_gemm_m16_skinny", "metrale_w8a16_gemm_m16_skinny"},
      {"w8a16_gemm_m16_skinny_deep", "metrale_w8a16_gemm_m16_skinny_deep"},
      {"w8a16_gemm_m16_skinny_deep3", "metrale_w8a16_gemm_m16_skinny_deep"},
      {"w8a16_gemm_m16_skinny_deep32", "metrale_w8a16_gemm_m16_skinny_deep"},
  };
  for (const Named& e : kNames) {
    if (e.entry == plan.entry) return e.c_function;
  }
  metrale::fail("{}: the plan names {}, which has no C function", fn, plan.entry);
}

metrale_status plan_entry(metrale_service* service, std::string_view fn, uint32_t m,
                          uint32_t n, uint32_t k, const char** entry_out, uint32_t* split_out,
                          uint32_t* ctas_out, bool chunked) {
  return metrale::capi::run([&](metrale_status&) {
    metrale::KernelService& svc = metrale::capi::service(service, fn);
    metrale::capi::require(entry_out, fn, "entry_out");
    metrale::capi::require(split_out, fn, "split_out");
    metrale::capi::require(ctas_out, fn, "ctas_out");
    const metrale::M16Plan plan = device_plan(fn, svc, m, n, k, chunked);
    *entry_out = c_function(fn, plan, k);
    *split_out = plan.split;
    *ctas_out = plan.ctas;
  });
}

}  // namespace

extern "C" {

const char* metrale_status_name(metrale_status status) noexcept {
  switch (status) {
    case METRALE_OK:
      return "METRALE_OK";
    case METRALE_ERROR_INVALID_ARGUMENT:
      return "METRALE_ERROR_INVALID_ARGUMENT";
    case METRALE_ERROR_NO_DEVICE:
      return "METRALE_ERROR_NO_DEVICE";
    case METRALE_ERROR_UNSUPPORTED:
      return "METRALE_ERROR_UNSUPPORTED";
    case METRALE_ERROR_COMPILE:
      return "METRALE_ERROR_COMPILE";
    case METRALE_ERROR_CUDA:
      return "METRALE_ERROR_CUDA";
    case METRALE_ERROR_INTERNAL:
      return "METRALE_ERROR_INTERNAL";
  }
  return "unknown status";
}

const char* metrale_last_error(void) noexcept {
  using namespace metrale::capi;
  return t_fallback != nullptr ? t_fallback : t_message.c_str();
}

const char* metrale_version(void) noexcept { return METRALE_VERSION_STRING; }

metrale_status metrale_service_create(int device, metrale_service** out) noexcept {
  return run([&](metrale_status& phase) {
    require(out, "metrale_service_create", "out");
    *out = nullptr;
    // Every failure of the constructor is the driver or the device being absent.
    phase = METRALE_ERROR_NO_DEVICE;
    auto* made = new metrale_service(device);
    *out = made;
  });
}

metrale_status metrale_service_create_for_target(const char* target,
                                                 metrale_service** out) noexcept {
  return run([&](metrale_status&) {
    require(out, "metrale_service_create_for_target", "out");
    *out = nullptr;
    require(target, "metrale_service_create_for_target", "target");
    *out = new metrale_service(KernelService::CompileOnly{target});
  });
}

void metrale_service_destroy(metrale_service* service) noexcept {
  // The destructors release driver objects and report failures through the log only.
  delete service;
}

metrale_status metrale_service_target(const metrale_service* service, const char** out) noexcept {
  return run([&](metrale_status&) {
    require(service, "metrale_service_target", "service");
    require(out, "metrale_service_target", "out");
    *out = service->service.target().c_str();
  });
}

metrale_status metrale_service_is_compile_only(const metrale_service* service, int* out) noexcept {
  return run([&](metrale_status&) {
    require(service, "metrale_service_is_compile_only", "service");
    require(out, "metrale_service_is_compile_only", "out");
    *out = service->service.compile_only() ? 1 : 0;
  });
}

metrale_status metrale_warm_up(metrale_service* service, const char* const* variants,
                               size_t count) noexcept {
  return run([&](metrale_status& phase) {
    constexpr std::string_view fn = "metrale_warm_up";
    KernelService& svc = metrale::capi::service(service, fn);
    if (count > 0) require(variants, fn, "variants");
    std::vector<std::string> names;
    for (size_t i = 0; i < count; ++i) {
      if (variants[i] == nullptr) metrale::fail("{}: variants[{}] is NULL", fn, i);
      names.push_back(metrale::variant_named(variants[i]).name);
      // metrale_w8a16_gemm_m16_skinny_deep runs the 32-row form, a module of its own,
      // where the plan gives it that form.
      if (names.back() == "w8a16_gemm_m16_skinny_deep") {
        names.push_back("w8a16_gemm_m16_skinny_deep32");
      }
    }
    phase = METRALE_ERROR_COMPILE;
    svc.warm_up(names);
  });
}

metrale_status metrale_w8a16_gemm_m16(metrale_service* service, uint64_t input, uint64_t weight,
                                      uint64_t block_scale, uint64_t output, uint32_t m, uint32_t n,
                                      uint32_t k, void* stream) noexcept {
  return launch_entry(service, "metrale_w8a16_gemm_m16", "w8a16_gemm_m16",
                      [&](const GpuBackend& gpu, KernelHandle kernel) {
                        metrale::w8a16_gemm_m16(gpu, kernel, DevicePtr(input), DevicePtr(weight),
                                                DevicePtr(block_scale), DevicePtr(output), m, n, k,
                                                stream_handle(stream));
                      });
}

metrale_status metrale_w8a16_gemm_m16_n64(metrale_service* service, uint64_t input, uint64_t weight,
                                          uint64_t block_scale, uint64_t output, uint32_t m,
                                          uint32_t n, uint32_t k, void* stream) noexcept {
  return launch_entry(service, "metrale_w8a16_gemm_m16_n64", "w8a16_gemm_m16_n64",
                      [&](const GpuBackend& gpu, KernelHandle kernel) {
                        metrale::w8a16_gemm_m16_n64(gpu, kernel, DevicePtr(input),
                                                    DevicePtr(weight), DevicePtr(block_scale),
                                                    DevicePtr(output), m, n, k,
                                                    stream_handle(stream));
                      });
}

metrale_status metrale_w8a16_gemm_m16_strided(metrale_service* service, uint64_t input,
                                              uint64_t weight, uint64_t block_scale,
                                              uint64_t output, uint32_t m, uint32_t n, uint32_t k,
                                              uint32_t a_row_stride, uint32_t c_row_stride,
                                              void* stream) noexcept {
  return launch_entry(service, "metrale_w8a16_gemm_m16_strided", "w8a16_gemm_m16_strided",
                      [&](const GpuBackend& gpu, KernelHandle kernel) {
                        metrale::w8a16_gemm_m16_strided(gpu, kernel, DevicePtr(input),
                                                        DevicePtr(weight), DevicePtr(block_scale),
                                                        DevicePtr(output), m, n, k, a_row_stride,
                                                        c_row_stride, stream_handle(stream));
                      });
}

metrale_status metrale_w8a16_gemm_m16_splitk(metrale_service* service, uint64_t input,
                                             uint64_t weight, uint64_t block_scale,
                                             uint64_t output, uint32_t m, uint32_t n, uint32_t k,
                                             uint32_t a_row_stride, uint32_t c_row_stride,
                                             uint32_t split, void* stream) noexcept {
  return launch_entry(service, "metrale_w8a16_gemm_m16_splitk", "w8a16_gemm_m16_splitk",
                      [&](const GpuBackend& gpu, KernelHandle kernel) {
                        metrale::w8a16_gemm_m16_splitk(gpu, kernel, DevicePtr(input),
                                                       DevicePtr(weight), DevicePtr(block_scale),
                                                       DevicePtr(output), m, n, k, a_row_stride,
                                                       c_row_stride, split, stream_handle(stream));
                      });
}

metrale_status metrale_w8a16_gemm_m16_streamk(metrale_service* service, uint64_t input,
                                              uint64_t weight, uint64_t block_scale,
                                              uint64_t output, uint32_t m, uint32_t n, uint32_t k,
                                              uint32_t a_row_stride, uint32_t c_row_stride,
                                              uint64_t workspace, uint64_t workspace_bytes,
                                              uint32_t ctas, void* stream) noexcept {
  return launch_entry(
      service, "metrale_w8a16_gemm_m16_streamk", "w8a16_gemm_m16_streamk",
      [&](const GpuBackend& gpu, KernelHandle kernel, metrale::KernelService& svc) {
        // The ring depth the C++ plan gives this grid on this device.
        const std::uint32_t stages = metrale::streamk_plan_stages(ctas, plan_sm_count(svc));
        metrale::w8a16_gemm_m16_streamk(
            gpu, kernel, DevicePtr(input), DevicePtr(weight), DevicePtr(block_scale),
            DevicePtr(output), m, n, k, a_row_stride, c_row_stride,
            metrale::StreamKWorkspace{DevicePtr(workspace), workspace_bytes}, ctas,
            stream_handle(stream), {}, stages);
      });
}

metrale_status metrale_w8a16_gemm_m16_streamk_workspace_bytes(uint32_t n, uint32_t ctas,
                                                              uint64_t* bytes_out) noexcept {
  return run([&](metrale_status&) {
    require(bytes_out, "metrale_w8a16_gemm_m16_streamk_workspace_bytes", "bytes_out");
    *bytes_out = metrale::w8a16_gemm_m16_streamk_workspace_bytes(n, ctas);
  });
}

metrale_status metrale_w8a16_gemm_m16_skinny(metrale_service* service, uint64_t input,
                                             uint64_t weight, uint64_t block_scale,
                                             uint64_t output, uint32_t m, uint32_t n, uint32_t k,
                                             uint32_t a_row_stride, uint32_t c_row_stride,
                                             uint64_t workspace, uint64_t workspace_bytes,
                                             void* stream) noexcept {
  return launch_entry(service, "metrale_w8a16_gemm_m16_skinny", "w8a16_gemm_m16_skinny",
                      [&](const GpuBackend& gpu, KernelHandle kernel) {
                        metrale::w8a16_gemm_m16_skinny(
                            gpu, kernel, DevicePtr(input), DevicePtr(weight),
                            DevicePtr(block_scale), DevicePtr(output), m, n, k, a_row_stride,
                            c_row_stride,
                            metrale::StreamKWorkspace{DevicePtr(workspace), workspace_bytes},
                            metrale::w8a16_gemm_m16_skinny_plan_warps(k),
                            stream_handle(stream));
                      });
}

metrale_status metrale_w8a16_gemm_m16_skinny_workspace_bytes(uint32_t n, uint32_t k,
                                                             uint64_t* bytes_out) noexcept {
  return run([&](metrale_status&) {
    constexpr std::string_view fn = "metrale_w8a16_gemm_m16_skinny_workspace_bytes";
    require(bytes_out, fn, "bytes_out");
    metrale::ensure(k % 128 == 0 && k != 0, "{}: k={} is not a positive multiple of 128", fn, k);
    *bytes_out = metrale::w8a16_gemm_m16_skinny_workspace_bytes(
        n, k, metrale::w8a16_gemm_m16_skinny_plan_warps(k), 1);
  });
}

metrale_status metrale_w8a16_gemm_m16_skinny_deep(metrale_service* service, uint64_t input,
                                                  uint64_t weight, uint64_t block_scale,
                                                  uint64_t output, uint32_t m, uint32_t n,
                                                  uint32_t k, uint32_t a_row_stride,
                                                  uint32_t c_row_stride, void* stream) noexcept {
  // One chunk: warps x blocks cover K, so the launch touches no workspace.
  return launch_deep(service, "metrale_w8a16_gemm_m16_skinny_deep", input, weight,
                     block_scale, output, m, n, k, a_row_stride, c_row_stride, {}, false,
                     stream);
}

metrale_status metrale_w8a16_gemm_m16_skinny_deep_chunked(
    metrale_service* service, uint64_t input, uint64_t weight, uint64_t block_scale,
    uint64_t output, uint32_t m, uint32_t n, uint32_t k, uint32_t a_row_stride,
    uint32_t c_row_stride, uint64_t workspace, uint64_t workspace_bytes, void* stream) noexcept {
  return launch_deep(service, "metrale_w8a16_gemm_m16_skinny_deep_chunked", input, weight,
                     block_scale, output, m, n, k, a_row_stride, c_row_stride,
                     metrale::StreamKWorkspace{DevicePtr(workspace), workspace_bytes}, true,
                     stream);
}

metrale_status metrale_w8a16_gemm_m16_skinny_deep_chunked_workspace_bytes(
    metrale_service* service, uint32_t m, uint32_t n, uint32_t k, uint64_t* bytes_out) noexcept {
  return metrale::capi::run([&](metrale_status&) {
    constexpr std::string_view fn = "metrale_w8a16_gemm_m16_skinny_deep_chunked_workspace_bytes";
    metrale::KernelService& svc = metrale::capi::service(service, fn);
    require(bytes_out, fn, "bytes_out");
    metrale::ensure(k % 128 == 0 && k != 0, "{}: k={} is not a positive multiple of 128", fn, k);
    metrale::ensure(m >= 1 && m <= 16, "{}: m={} outside 1..=16", fn, m);
    const DeepLaunch form = deep_launch(svc, m, n, k, true);
    *bytes_out = metrale::w8a16_gemm_m16_skinny_workspace_bytes(n, k, form.warps,
                                                                form.warp_blocks);
  });
}

metrale_status metrale_plan_m16_gemm(metrale_service* service, uint32_t m, uint32_t n,
                                     uint32_t k, uint32_t* split_out) noexcept {
  return run([&](metrale_status&) {
    constexpr std::string_view fn = "metrale_plan_m16_gemm";
    metrale::KernelService& svc = metrale::capi::service(service, fn);
    require(split_out, fn, "split_out");
    *split_out = device_plan(fn, svc, m, n, k).split;
  });
}

metrale_status metrale_plan_m16_gemm_entry(metrale_service* service, uint32_t m, uint32_t n,
                                           uint32_t k, const char** entry_out,
                                           uint32_t* split_out, uint32_t* ctas_out) noexcept {
  return plan_entry(service, "metrale_plan_m16_gemm_entry", m, n, k, entry_out, split_out,
                    ctas_out, false);
}

metrale_status metrale_plan_m16_gemm_entry_chunked(metrale_service* service, uint32_t m,
                                                   uint32_t n, uint32_t k,
                                                   const char** entry_out, uint32_t* split_out,
                                                   uint32_t* ctas_out) noexcept {
  return plan_entry(service, "metrale_plan_m16_gemm_entry_chunked", m, n, k, entry_out,
                    split_out, ctas_out, true);
}

metrale_status metrale_w8a16_gemv_batch16(metrale_service* service, uint64_t input, uint64_t weight,
                                          uint64_t block_scale, uint64_t output, uint32_t m,
                                          uint32_t n, uint32_t k, void* stream) noexcept {
  return launch_entry(service, "metrale_w8a16_gemv_batch16", "w8a16_gemv_batch16",
                      [&](const GpuBackend& gpu, KernelHandle kernel) {
                        metrale::w8a16_gemv_batch16(gpu, kernel, DevicePtr(input),
                                                    DevicePtr(weight), DevicePtr(block_scale),
                                                    DevicePtr(output), m, n, k,
                                                    stream_handle(stream));
                      });
}

metrale_status metrale_w8a16_gemv_batch16_strided(metrale_service* service, uint64_t input,
                                                  uint64_t weight, uint64_t block_scale,
                                                  uint64_t output, uint32_t m, uint32_t n,
                                                  uint32_t k, uint32_t a_row_stride,
                                                  uint32_t c_row_stride, void* stream) noexcept {
  return launch_entry(service, "metrale_w8a16_gemv_batch16_strided", "w8a16_gemv_batch16_strided",
                      [&](const GpuBackend& gpu, KernelHandle kernel) {
                        metrale::w8a16_gemv_batch16_strided(
                            gpu, kernel, DevicePtr(input), DevicePtr(weight),
                            DevicePtr(block_scale), DevicePtr(output), m, n, k, a_row_stride,
                            c_row_stride, stream_handle(stream));
                      });
}

metrale_status metrale_dense_ffn_select(metrale_service* service, uint32_t* n_tile) noexcept {
  return run([&](metrale_status& phase) {
    constexpr std::string_view fn = "metrale_dense_ffn_select";
    KernelService& svc = metrale::capi::service(service, fn);
    require(n_tile, fn, "n_tile");
    const std::uint32_t tile = metrale::m16_tc_n_tile(metrale::m16_tc_ntile_env());
    phase = METRALE_ERROR_COMPILE;
    svc.ffn_kernel(tile);
    *n_tile = tile;
  });
}

metrale_status metrale_dense_ffn(metrale_service* service, uint32_t n_tile, uint64_t input,
                                 uint64_t weight, uint64_t block_scale, uint64_t output,
                                 uint32_t rows, uint32_t n, uint32_t k, void* stream) noexcept {
  return run([&](metrale_status& phase) {
    constexpr std::string_view fn = "metrale_dense_ffn";
    KernelService& svc = metrale::capi::service(service, fn);
    metrale::ensure(
        n_tile == metrale::W8A16_GEMM_M16_N_TILE || n_tile == metrale::W8A16_GEMM_M16_N_TILE_WIDE,
        "{}: n_tile={} is not a dense-FFN N tile ({} or {}, as "
        "metrale_dense_ffn_select returns)",
        fn, n_tile, metrale::W8A16_GEMM_M16_N_TILE, metrale::W8A16_GEMM_M16_N_TILE_WIDE);
    // Without the lever nothing is compiled: dense_ffn_m16_tc refuses the target with its
    // own first check, before it touches the (then empty) kernel handle. With it, the
    // guard pass refuses a bad argument before the first use compiles the kernel.
    const metrale::M16TcEntry entry = metrale::m16_tc_entry(n_tile);
    const auto launch = [&](const GpuBackend& gpu, KernelHandle kernel) {
      metrale::dense_ffn_m16_tc({entry.launcher, kernel, n_tile}, svc.levers(), gpu,
                                DevicePtr(input), DevicePtr(weight), DevicePtr(block_scale),
                                DevicePtr(output), rows, n, k, stream_handle(stream));
    };
    KernelHandle kernel{};
    if (svc.levers().ffn_m16_tc) {
      kernel = metrale::capi::kernel_after_guards(svc, entry.entry, phase, launch);
    } else {
      phase = METRALE_ERROR_UNSUPPORTED;
    }
    launch(metrale::capi::TrackedGpu(svc.gpu(), svc.compile_only(), phase), kernel);
  });
}

metrale_status metrale_qkv_projection(metrale_service* service, uint64_t input,
                                      uint32_t input_row_stride, uint64_t weight,
                                      uint64_t block_scale, uint64_t qkv, uint32_t per_seq_qkv,
                                      uint32_t slot_offset, uint32_t slot_width, uint32_t n_seq,
                                      uint32_t k, void* stream) noexcept {
  return run([&](metrale_status& phase) {
    KernelService& svc = metrale::capi::service(service, "metrale_qkv_projection");
    const auto launch = [&](const GpuBackend& gpu, KernelHandle kernel) {
      metrale::qkv_projection_m16_tc(svc.levers(), gpu, kernel, DevicePtr(input),
                                     input_row_stride, DevicePtr(weight), DevicePtr(block_scale),
                                     DevicePtr(qkv), per_seq_qkv,
                                     metrale::QkvSlot{slot_offset, slot_width}, n_seq, k,
                                     stream_handle(stream));
    };
    KernelHandle kernel{};
    if (svc.levers().attn_m16_tc) {
      kernel = metrale::capi::kernel_after_guards(svc, "w8a16_gemm_m16_strided", phase, launch);
    } else {
      phase = METRALE_ERROR_UNSUPPORTED;  // refused by the lever check, as above
    }
    launch(metrale::capi::TrackedGpu(svc.gpu(), svc.compile_only(), phase), kernel);
  });
}

}  // extern "C"
