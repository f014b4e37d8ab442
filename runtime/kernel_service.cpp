#include "metrale/kernel_service.hpp"

#include <algorithm>
#include <future>
#include <vector>

#include "metrale/cache_fill.hpp"
#include "metrale/embedded_sources.hpp"
#include "metrale/error.hpp"
#include "metrale/kernel_variants.hpp"
#include "metrale/nvrtc_compiler.hpp"

namespace metrale {
namespace {

// The compile-only service's backend: it knows its target and refuses everything that
// needs a device, so the launchers' checks still run before the refusal.
class NoDeviceBackend final : public GpuBackend {
 public:
  explicit NoDeviceBackend(std::string target) : target_(std::move(target)) {}
  ContextId context() const override { return 0; }
  std::string target() const override { return target_; }
  std::unique_ptr<LoadedModule> load_module(std::span<const char>,
                                            std::string_view label) const override {
    fail("compile-only service ({}): no CUDA device to load module {} into", target_, label);
  }
  TensorMapBytes tensor_map_2d(const TensorMap2dRequest& request) const override {
    return packed_tensor_map_request(request);
  }
  void launch(const KernelHandle& kernel, const LaunchConfig&, std::span<const KernelArg>,
              StreamHandle) const override {
    fail("compile-only service ({}): no CUDA device to launch {} on; create the service "
         "for a device to launch",
         target_, kernel.name != nullptr ? kernel.name : "?");
  }

 private:
  std::string target_;
};

std::string checked_target(std::string_view target) {
  std::string t = normalize_target(target);
  const std::vector<std::string> supported = nvrtc_supported_targets();
  if (std::find(supported.begin(), supported.end(), t) == supported.end()) {
    std::string list;
    for (const std::string& s : supported) list += (list.empty() ? "" : ", ") + s;
    fail("compile-only service: NVRTC {} cannot compile for {} (supported: {})",
         nvrtc_version(), t, list);
  }
  return t;
}

}  // namespace

KernelService::KernelService(int device_ordinal)
    : backend_(std::make_unique<CudaBackend>(device_ordinal)),
      gpu_(backend_.get()),
      target_(backend_->target()),
      cache_(std::make_unique<ModuleCache>(*backend_)),
      levers_(target_levers(target_)) {}

KernelService::KernelService(CompileOnly compile_only)
    : no_device_(std::make_unique<NoDeviceBackend>(checked_target(compile_only.target))),
      gpu_(no_device_.get()),
      target_(no_device_->target()),
      cache_(std::make_unique<ModuleCache>(*no_device_)),
      levers_(target_levers(target_)) {}

KernelService::~KernelService() = default;

CudaBackend& KernelService::backend() {
  if (backend_ == nullptr) {
    fail("compile-only service ({}): no CUDA device (memory, launches and synchronisation "
         "need a service created for a device)",
         target_);
  }
  return *backend_;
}

KernelHandle KernelService::kernel(std::string_view entry) {
  if (!compile_only()) return cache_->kernel(entry);
  const KernelVariant& variant = variant_for_entry(entry);
  // The name must outlive the handle: point into the static variant table.
  const auto it = std::find(variant.entries.begin(), variant.entries.end(), entry);
  return KernelHandle{nullptr, 0, it->c_str()};
}

std::optional<KernelHandle> KernelService::loaded_kernel(std::string_view entry) {
  if (compile_only()) return std::nullopt;
  return cache_->resolved(entry);
}

void KernelService::warm_up(std::span<const std::string> variants) {
  if (!compile_only()) {
    cache_->warm_up(variants);
    return;
  }
  const std::vector<KernelVariant> wanted = module_builds_named(variants);
  // With no device to load into, warming up means filling the persistent cache, so that
  // processes on a device of this target start from it.
  DiskCache disk(DiskCacheConfig::from_environment());
  std::vector<std::future<void>> jobs;
  for (const KernelVariant& v : wanted) {
    jobs.push_back(std::async(std::launch::async,
                              [this, &v, &disk] { compile_through_cache(disk, v, target_); }));
  }
  for (auto& j : jobs) j.get();
}

M16TcKernel KernelService::ffn_kernel() { return ffn_kernel(m16_tc_n_tile(m16_tc_ntile_env())); }

M16TcKernel KernelService::ffn_kernel(std::uint32_t n_tile) {
  const M16TcEntry e = m16_tc_entry(n_tile);
  return {e.launcher, kernel(e.entry), n_tile};
}

}  // namespace metrale
