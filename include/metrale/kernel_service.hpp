// One device's kernel service: its CUDA backend, its module cache and the dense-FFN
// selection, as an engine holds them for the life of a process (one per GPU).
#pragma once

#include <memory>
#include <span>
#include <string>

#include "metrale/cuda_backend.hpp"
#include "metrale/dense_ffn.hpp"
#include "metrale/module_cache.hpp"

namespace metrale {

class KernelService {
 public:
  // Throws Error when no driver or no such device is present.
  explicit KernelService(int device_ordinal = 0);

  CudaBackend& backend() { return *backend_; }
  ModuleCache& cache() { return *cache_; }
  const TargetLevers& levers() const { return levers_; }

  // Compiles and loads the named variants (every variant when empty) in parallel.
  void warm_up(std::span<const std::string> variants = {}) { cache_->warm_up(variants); }

  // The dense-FFN launcher chosen by METRALE_FFN_M16_TC_NTILE (see dense_ffn.hpp).
  M16TcKernel ffn_kernel() { return m16_tc_kernel(*cache_); }

 private:
  std::unique_ptr<CudaBackend> backend_;
  std::unique_ptr<ModuleCache> cache_;
  TargetLevers levers_;
};

}  // namespace metrale
