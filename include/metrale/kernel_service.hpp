// One device's kernel service: its CUDA backend, its module cache and the dense-FFN
// selection, as an engine holds them for the life of a process (one per GPU).
//
// A service can also be made for a compile target with no device (compile-only): it
// compiles kernels with NVRTC (warm_up) but loads nothing, and every launch through it
// runs the launchers' argument checks and then throws Error naming the missing device.
//
// Thread safety: every member may be called from many threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "metrale/cuda_backend.hpp"
#include "metrale/dense_ffn.hpp"
#include "metrale/module_cache.hpp"

namespace metrale {

class KernelService {
 public:
  // Throws Error when no driver or no such device is present.
  explicit KernelService(int device_ordinal = 0);

  // A compile-only service for `target` ("sm_90", "90" or "9.0"). Throws Error for a
  // target that is malformed or that the linked NVRTC cannot compile for.
  struct CompileOnly {
    std::string target;
  };
  explicit KernelService(CompileOnly compile_only);

  ~KernelService();
  KernelService(const KernelService&) = delete;
  KernelService& operator=(const KernelService&) = delete;

  bool compile_only() const { return backend_ == nullptr; }
  // The compile target, e.g. "sm_90".
  const std::string& target() const { return target_; }

  // The device's backend (memory, synchronisation); throws Error on a compile-only service.
  CudaBackend& backend();
  // The backend launches go to: the device's, or on a compile-only service one that
  // refuses every launch with an Error.
  const GpuBackend& gpu() const { return *gpu_; }
  ModuleCache& cache() { return *cache_; }
  const TargetLevers& levers() const { return levers_; }

  // The handle of `entry`, compiling and loading its module on first use. On a
  // compile-only service: a handle that carries the entry name and nothing to launch
  // (nothing is compiled). Throws Error for an unknown entry.
  KernelHandle kernel(std::string_view entry);

  // The handle of `entry` where an earlier kernel(entry) has loaded its module, else
  // nullopt (always on a compile-only service): a lookup that compiles nothing.
  std::optional<KernelHandle> loaded_kernel(std::string_view entry);

  // Compiles and loads the named variants (every variant when empty; an entry name stands
  // for its variant) in parallel. On a compile-only service it compiles them for the
  // target and loads nothing.
  void warm_up(std::span<const std::string> variants = {});

  // The dense-FFN launcher chosen by METRALE_FFN_M16_TC_NTILE (see dense_ffn.hpp).
  M16TcKernel ffn_kernel();
  // The dense-FFN launcher for an explicit N tile (32 or 64); throws Error otherwise.
  M16TcKernel ffn_kernel(std::uint32_t n_tile);

 private:
  std::unique_ptr<CudaBackend> backend_;     // null on a compile-only service
  std::unique_ptr<GpuBackend> no_device_;    // the compile-only service's backend
  const GpuBackend* gpu_ = nullptr;
  std::string target_;
  std::unique_ptr<ModuleCache> cache_;
  TargetLevers levers_;
};

}  // namespace metrale
