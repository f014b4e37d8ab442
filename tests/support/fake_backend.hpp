// A GpuBackend that records launches instead of running them, and a compile function
// that counts calls, for host tests of launchers, the builder and the module cache.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "metrale/gpu_backend.hpp"
#include "metrale/module_cache.hpp"

namespace metrale::test {

struct RecordedLaunch {
  std::string kernel;
  void* function = nullptr;  // the CUfunction the launch would run
  LaunchConfig config;
  std::vector<std::vector<std::uint8_t>> args;  // each argument's bytes, in order
  StreamHandle stream = 0;

  std::uint64_t u64_arg(std::size_t i) const;
  std::uint32_t u32_arg(std::size_t i) const;
};

class RecordingBackend final : public GpuBackend {
 public:
  ContextId context() const override { return context_id; }
  std::string target() const override { return target_name; }
  std::unique_ptr<LoadedModule> load_module(std::span<const char> image,
                                            std::string_view label) const override;
  void check_not_capturing(std::string_view) const override { ++capture_checks; }
  TensorMapBytes tensor_map_2d(const TensorMap2dRequest& request) const override {
    ++tensor_maps;
    return packed_tensor_map_request(request);
  }
  void launch(const KernelHandle& kernel, const LaunchConfig& config,
              std::span<const KernelArg> args, StreamHandle stream) const override;

  std::vector<RecordedLaunch> launches() const;

  ContextId context_id = 0x1234;
  std::string target_name = "sm_90";
  // Added to every tile constant the fake modules report (0 = report the truth).
  std::int32_t tile_constant_skew = 0;
  mutable std::atomic<int> capture_checks{0};
  mutable std::atomic<int> tensor_maps{0};

 private:
  mutable std::mutex mutex_;
  mutable std::vector<RecordedLaunch> launches_;
};

// A compile function that produces a fake image naming the request's defines, counts
// its calls and can take its time (to widen races in concurrency tests).
struct CountingCompiler {
  std::atomic<int> calls{0};
  std::chrono::milliseconds delay{0};
  bool fail = false;
  ModuleCache::CompileFn fn();
};

}  // namespace metrale::test
