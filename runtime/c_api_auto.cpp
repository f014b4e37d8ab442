// The C ABI's automatic choice: metrale_w8a16_gemm_m16_auto and its workspace size, over
// w8a16_gemm_m16_auto (w8a16_gemm_m16_auto.hpp) with the service's device and kernels.
#include "c_api_internal.hpp"
#include "launch_guards.hpp"
#include "metrale/kernels.h"
#include "metrale/w8a16_gemm_m16_auto.hpp"

using metrale::DevicePtr;
using metrale::capi::require;
using metrale::plan_device;
using metrale::capi::run;

extern "C" {

metrale_status metrale_w8a16_gemm_m16_auto_workspace_bytes(metrale_service* service, uint32_t m,
                                                           uint32_t n, uint32_t k,
                                                           int programmatic_dependent,
                                                           uint64_t* bytes_out) noexcept {
  return run([&](metrale_status&) {
    constexpr std::string_view fn = "metrale_w8a16_gemm_m16_auto_workspace_bytes";
    metrale::KernelService& svc = metrale::capi::service(service, fn);
    require(bytes_out, fn, "bytes_out");
    *bytes_out = metrale::w8a16_gemm_m16_auto_workspace_bytes(m, n, k, plan_device(svc),
                                                              programmatic_dependent != 0);
  });
}

metrale_status metrale_w8a16_gemm_m16_auto(metrale_service* service, uint64_t input,
                                           uint64_t weight, uint64_t block_scale, uint64_t output,
                                           uint32_t m, uint32_t n, uint32_t k,
                                           uint32_t a_row_stride, uint32_t c_row_stride,
                                           uint64_t workspace, uint64_t workspace_bytes,
                                           int programmatic_dependent, void* stream) noexcept {
  return run([&](metrale_status& phase) {
    constexpr std::string_view fn = "metrale_w8a16_gemm_m16_auto";
    metrale::KernelService& svc = metrale::capi::service(service, fn);
    const bool pdl = programmatic_dependent != 0;
    const metrale::M16PlanDevice device = plan_device(svc);
    const metrale::StreamKWorkspace ws{DevicePtr(workspace), workspace_bytes};
    // The arguments first, under the C++ function's name as every launcher's (the launch
    // below checks them again and launches nothing on a bad one): a refused call compiles
    // nothing.
    metrale::guards::check_call("w8a16_gemm_m16_auto", DevicePtr(input), DevicePtr(weight),
                                DevicePtr(block_scale), DevicePtr(output), m, n, k,
                                a_row_stride, c_row_stride);
    const metrale::M16Plan plan = metrale::plan_m16_gemm(m, n, k, device, {pdl});
    const std::uint64_t need = metrale::m16_plan_grid(plan, n, k).workspace_bytes;
    metrale::guards::check_plan_workspace(fn, plan.entry, need, ws.ptr, ws.bytes,
                                          "metrale_w8a16_gemm_m16_auto_workspace_bytes");
    // The kernels the launch looks up are compiled on first use: an error there is a
    // compile error.
    const metrale::KernelLookup kernels = [&](std::string_view entry) {
      phase = METRALE_ERROR_COMPILE;
      const metrale::KernelHandle handle = svc.kernel(entry);
      phase = METRALE_ERROR_INVALID_ARGUMENT;
      return handle;
    };
    const metrale::capi::TrackedGpu gpu(svc.gpu(), svc.compile_only(), phase);
    metrale::w8a16_gemm_m16_planned(gpu, kernels, plan, DevicePtr(input), DevicePtr(weight),
                                    DevicePtr(block_scale), DevicePtr(output), m, n, k,
                                    a_row_stride, c_row_stride, ws,
                                    metrale::capi::stream_handle(stream), pdl);
  });
}

}  // extern "C"
