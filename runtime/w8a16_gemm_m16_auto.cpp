#include "metrale/w8a16_gemm_m16_auto.hpp"

#include "launch_guards.hpp"
#include "metrale/error.hpp"
#include "metrale/w8a16_gemm_m16.hpp"
#include "metrale/w8a16_gemm_m16_skinny.hpp"
#include "metrale/w8a16_gemm_m16_splitk.hpp"
#include "metrale/w8a16_gemm_m16_stream.hpp"

namespace metrale {

KernelLookup kernel_lookup(ModuleCache& cache) {
  return [&cache](std::string_view entry) { return cache.kernel(entry); };
}

KernelLookup kernel_lookup(KernelService& service) {
  return [&service](std::string_view entry) { return service.kernel(entry); };
}

std::uint64_t w8a16_gemm_m16_auto_workspace_bytes(std::uint32_t m, std::uint32_t n,
                                                  std::uint32_t k, M16PlanDevice device,
                                                  bool programmatic_dependent) {
  constexpr std::string_view fn = "w8a16_gemm_m16_auto_workspace_bytes";
  guards::check_shape(fn, m, n, k);
  const M16Plan plan = plan_m16_gemm(m, n, k, device, M16LaunchOptions{programmatic_dependent});
  return m16_plan_grid(plan, n, k).workspace_bytes;
}

std::uint32_t plan_sm_count(KernelService& service) { return plan_device(service).sm_count; }

M16PlanDevice plan_device(KernelService& service) {
  return service.compile_only() ? M16PlanDevice{132} : plan_device(service.backend().info());
}

M16PlanDevice plan_device(const DeviceInfo& info) {
  return {static_cast<std::uint32_t>(info.sm_count), info.dram_gbps};
}

void w8a16_gemm_m16_auto(KernelService& service, DevicePtr input, DevicePtr weight,
                         DevicePtr block_scale, DevicePtr output, std::uint32_t m,
                         std::uint32_t n, std::uint32_t k, std::uint32_t a_row_stride,
                         std::uint32_t c_row_stride, StreamKWorkspace workspace,
                         StreamHandle stream, bool programmatic_dependent) {
  w8a16_gemm_m16_auto(service.gpu(), kernel_lookup(service), plan_device(service), input,
                      weight, block_scale, output, m, n, k, a_row_stride, c_row_stride,
                      workspace, stream, programmatic_dependent);
}

void w8a16_gemm_m16_auto(const GpuBackend& gpu, const KernelLookup& kernels,
                         M16PlanDevice device, DevicePtr input, DevicePtr weight,
                         DevicePtr block_scale, DevicePtr output, std::uint32_t m,
                         std::uint32_t n, std::uint32_t k, std::uint32_t a_row_stride,
                         std::uint32_t c_row_stride, StreamKWorkspace workspace,
                         StreamHandle stream, bool programmatic_dependent) {
  // The launchers' checks before a plan is made: a shape no launcher accepts is never
  // planned.
  guards::check_call("w8a16_gemm_m16_auto", input, weight, block_scale, output, m, n, k,
                     a_row_stride, c_row_stride);
  const M16Plan plan = plan_m16_gemm(m, n, k, device, M16LaunchOptions{programmatic_dependent});
  w8a16_gemm_m16_planned(gpu, kernels, plan, input, weight, block_scale, output, m, n, k,
                         a_row_stride, c_row_stride, workspace, stream, programmatic_dependent);
}

void w8a16_gemm_m16_planned(const GpuBackend& gpu, const KernelLookup& kernels,
                            const M16Plan& plan,
                            DevicePtr input, DevicePtr weight, DevicePtr block_scale,
                            DevicePtr output, std::uint32_t m, std::uint32_t n, std::uint32_t k,
                            std::uint32_t a_row_stride, std::uint32_t c_row_stride,
                            StreamKWorkspace workspace, StreamHandle stream,
                            bool programmatic_dependent) {
  constexpr std::string_view fn = "w8a16_gemm_m16_planned";
  guards::check_call(fn, input, weight, block_scale, output, m, n, k, a_row_stride,
                     c_row_stride);
  const std::uint64_t need = m16_plan_grid(plan, n, k).workspace_bytes;
  guards::check_plan_workspace(fn, plan.entry, need, workspace.ptr, workspace.bytes,
                               "m16_plan_grid");
  const M16LaunchOptions options{programmatic_dependent, plan.chunk_cluster,
                                 plan.max_ctas_per_sm};
  const std::string_view e = plan.entry;
  if (e == "w8a16_gemm_m16" || e == "w8a16_gemm_m16_n64") {
    if (a_row_stride != k || c_row_stride != n) {
      w8a16_gemm_m16_strided(gpu, kernels("w8a16_gemm_m16_strided"), input, weight,
                             block_scale, output, m, n, k, a_row_stride, c_row_stride, stream);
    } else if (e == "w8a16_gemm_m16") {
      w8a16_gemm_m16(gpu, kernels(e), input, weight, block_scale, output, m, n, k, stream);
    } else {
      w8a16_gemm_m16_n64(gpu, kernels(e), input, weight, block_scale, output, m, n, k,
                         stream);
    }
  } else if (e == "w8a16_gemm_m16_splitk") {
    w8a16_gemm_m16_splitk(gpu, kernels(e), input, weight, block_scale, output, m, n, k,
                          a_row_stride, c_row_stride, plan.split, stream, options);
  } else if (e == "w8a16_gemm_m16_stream") {
    w8a16_gemm_m16_stream(gpu, kernels(e), input, weight, block_scale, output, m, n, k,
                          a_row_stride, c_row_stride, plan.split, stream, options);
  } else if (e == "w8a16_gemm_m16_streamk") {
    w8a16_gemm_m16_streamk(gpu, kernels(e), input, weight, block_scale, output, m, n, k,
                           a_row_stride, c_row_stride, workspace, plan.ctas, stream, options,
                           plan.stages);
  } else if (e == "w8a16_gemm_m16_skinny") {
    w8a16_gemm_m16_skinny(gpu, kernels(e), input, weight, block_scale, output, m, n, k,
                          a_row_stride, c_row_stride, workspace, plan.warps, stream, options);
  } else if (e == "w8a16_gemm_m16_skinny_deep" || e == "w8a16_gemm_m16_skinny_deep3" ||
             e == "w8a16_gemm_m16_skinny_deep32") {
    w8a16_gemm_m16_skinny_deep(gpu, kernels(e), input, weight, block_scale, output, m, n,
                               k, a_row_stride, c_row_stride, workspace, plan.warps,
                               plan.warp_blocks, stream, options);
  } else {
    fail("{}: the plan names '{}', which no launcher runs", fn, e);
  }
}

}  // namespace metrale
