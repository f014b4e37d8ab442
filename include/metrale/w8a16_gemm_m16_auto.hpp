// The automatic choice in one call: the entry plan_m16_gemm picks for the shape and the
// device, launched as its own launcher launches it (split, CTAs, ring stages, warps, blocks
// per warp, spread and cluster from the plan). For callers that let the library pick, e.g.
// attention projections; the dense FFN keeps METRALE_FFN_M16_TC_NTILE (dense_ffn.hpp).
//
// Operands and pitches as w8a16_gemm_m16_strided. Deterministic for a device, shape and
// launch mode (the plan is a function of them), and held to the same accuracy budget as
// every entry. Every check precedes the launch: an error launches nothing and writes
// nothing.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include "metrale/gpu_backend.hpp"
#include "metrale/kernel_service.hpp"
#include "metrale/m16_plan.hpp"
#include "metrale/m16_plan_grid.hpp"
#include "metrale/module_cache.hpp"
#include "metrale/w8a16_gemm_m16_streamk.hpp"

namespace metrale {

// Where a launch takes its kernel handles from, by entry name: KernelService::kernel or
// ModuleCache::kernel (compiling a module on its first use).
using KernelLookup = std::function<KernelHandle(std::string_view entry)>;

// The lookups of a module cache and of a service; each holds a reference to it.
KernelLookup kernel_lookup(ModuleCache& cache);
KernelLookup kernel_lookup(KernelService& service);

// The workspace w8a16_gemm_m16_auto needs for m x n x k on `device` (0 where its plan needs
// none): m16_plan_grid of plan_m16_gemm's plan.
std::uint64_t w8a16_gemm_m16_auto_workspace_bytes(std::uint32_t m, std::uint32_t n,
                                                  std::uint32_t k, M16PlanDevice device,
                                                  bool programmatic_dependent = false);

// plan_m16_gemm(m, n, k, device, {programmatic_dependent}), run by w8a16_gemm_m16_planned.
// `device`: the one launched on (the plan is made for it; plan_device).
void w8a16_gemm_m16_auto(const GpuBackend& gpu, const KernelLookup& kernels,
                         M16PlanDevice device, DevicePtr input, DevicePtr weight,
                         DevicePtr block_scale, DevicePtr output, std::uint32_t m,
                         std::uint32_t n, std::uint32_t k, std::uint32_t a_row_stride,
                         std::uint32_t c_row_stride, StreamKWorkspace workspace,
                         StreamHandle stream, bool programmatic_dependent = false);

// The same on a service: its device (plan_device), its kernels and its launch backend.
void w8a16_gemm_m16_auto(KernelService& service, DevicePtr input, DevicePtr weight,
                         DevicePtr block_scale, DevicePtr output, std::uint32_t m,
                         std::uint32_t n, std::uint32_t k, std::uint32_t a_row_stride,
                         std::uint32_t c_row_stride, StreamKWorkspace workspace,
                         StreamHandle stream, bool programmatic_dependent = false);

// The SMs a service plans for: its device's, or 132 (an H100 / H200) on a compile-only one.
std::uint32_t plan_sm_count(KernelService& service);

// The device a service plans for: its SMs and DRAM bandwidth (DeviceInfo::dram_gbps), or
// 132 SMs of unknown bandwidth on a compile-only one.
M16PlanDevice plan_device(KernelService& service);

// The plan's device for a device the driver describes: its SMs and DRAM bandwidth.
M16PlanDevice plan_device(const DeviceInfo& info);

// Runs `plan`, plan_m16_gemm's for m, n and k, through the launcher its entry names, with
// programmatic dependent launch where `programmatic_dependent` (as the plan was made: a PDL
// plan's spread and cluster are for launches with PDL). Handles come from `kernels`.
// `workspace`: at least m16_plan_grid(plan, n, k).workspace_bytes, 16-byte aligned, zeroed
// once and left zero by every launch, one stream at a time (as stream-K's,
// StreamKWorkspace); empty where that is 0. The seed's contiguous entries run
// as planned on contiguous rows (a_row_stride == k, c_row_stride == n), else as
// w8a16_gemm_m16_strided (its 32-wide tiles).
void w8a16_gemm_m16_planned(const GpuBackend& gpu, const KernelLookup& kernels,
                            const M16Plan& plan,
                            DevicePtr input, DevicePtr weight, DevicePtr block_scale,
                            DevicePtr output, std::uint32_t m, std::uint32_t n, std::uint32_t k,
                            std::uint32_t a_row_stride, std::uint32_t c_row_stride,
                            StreamKWorkspace workspace, StreamHandle stream,
                            bool programmatic_dependent = false);

}  // namespace metrale
