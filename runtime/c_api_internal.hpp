// What the C ABI's source files share: the service handle, the per-thread last error,
// and the wrapper that turns everything thrown inside an entry point into a status.
#pragma once

#include <cstdint>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "metrale/error.hpp"
#include "metrale/gpu_backend.hpp"
#include "metrale/kernel_service.hpp"
#include "metrale/kernels.h"

struct metrale_service {
  template <typename Arg>
  explicit metrale_service(Arg&& arg) : service(std::forward<Arg>(arg)) {}
  metrale::KernelService service;
};

namespace metrale::capi {

// Records the message metrale_last_error() returns on this thread; never throws.
void set_last_error(std::string_view message) noexcept;

// Runs `body(phase)` and returns its status. `phase` is the status an Error thrown at
// that point maps to: the body moves it forward as it goes (checking arguments,
// compiling, launching), so the same Error type yields the status of the stage that
// failed. Anything else thrown is METRALE_ERROR_INTERNAL. Nothing escapes.
template <typename Body>
metrale_status run(Body&& body) noexcept {
  metrale_status phase = METRALE_ERROR_INVALID_ARGUMENT;
  try {
    body(phase);
    set_last_error({});
    return METRALE_OK;
  } catch (const Error& e) {
    set_last_error(e.what());
    return phase;
  } catch (const std::bad_alloc&) {
    set_last_error("out of host memory");
  } catch (const std::exception& e) {
    try {
      set_last_error(std::string("internal error: ") + e.what());
    } catch (...) {
      set_last_error("internal error");
    }
  } catch (...) {
    set_last_error("internal error: an unknown exception");
  }
  return METRALE_ERROR_INTERNAL;
}

// The service behind a handle; throws Error naming `fn` for NULL.
KernelService& service(metrale_service* handle, std::string_view fn);

// Throws Error naming `fn` and `what` for a NULL pointer argument.
void require(const void* pointer, std::string_view fn, std::string_view what);

inline StreamHandle stream_handle(void* stream) {
  return static_cast<StreamHandle>(reinterpret_cast<std::uintptr_t>(stream));
}

// Forwards to the service's launch backend and moves `phase` to the launch stage when a
// launch is issued: an Error before that is a refused argument; one from the launch, a
// driver failure, or on a compile-only service the missing device.
class TrackedGpu final : public GpuBackend {
 public:
  TrackedGpu(const GpuBackend& inner, bool compile_only, metrale_status& phase)
      : inner_(inner),
        launch_status_(compile_only ? METRALE_ERROR_NO_DEVICE : METRALE_ERROR_CUDA),
        phase_(phase) {}
  ContextId context() const override { return inner_.context(); }
  std::string target() const override { return inner_.target(); }
  std::unique_ptr<LoadedModule> load_module(std::span<const char> image,
                                            std::string_view label) const override {
    return inner_.load_module(image, label);
  }
  void check_not_capturing(std::string_view module) const override {
    inner_.check_not_capturing(module);
  }
  TensorMapBytes tensor_map_2d(const TensorMap2dRequest& request) const override {
    return inner_.tensor_map_2d(request);
  }
  void launch(const KernelHandle& kernel, const LaunchConfig& config,
              std::span<const KernelArg> args, StreamHandle stream) const override {
    phase_ = launch_status_;
    inner_.launch(kernel, config, args, stream);
  }

 private:
  const GpuBackend& inner_;
  metrale_status launch_status_;
  metrale_status& phase_;
};

// The backend of a guard pass: a launcher run on it makes every check it makes before a
// launch, and nothing is loaded, encoded or launched. The C entries run it before they
// resolve their kernel, so that a refused argument is refused as such (and at once), not
// after a first use has compiled the kernel or as that compile's error.
class GuardOnlyGpu final : public GpuBackend {
 public:
  explicit GuardOnlyGpu(const GpuBackend& inner) : inner_(inner) {}
  ContextId context() const override { return inner_.context(); }
  std::string target() const override { return inner_.target(); }
  std::unique_ptr<LoadedModule> load_module(std::span<const char> image,
                                            std::string_view label) const override;
  TensorMapBytes tensor_map_2d(const TensorMap2dRequest& request) const override {
    (void)request;
    return {};
  }
  void launch(const KernelHandle& kernel, const LaunchConfig& config,
              std::span<const KernelArg> args, StreamHandle stream) const override {
    (void)kernel, (void)config, (void)args, (void)stream;
  }

 private:
  const GpuBackend& inner_;
};

// The handle a guard pass gives a launcher: the entry's name (which the launchers check)
// and no function, so that nothing could run it.
inline KernelHandle guard_pass_handle(const char* entry) { return {nullptr, 0, entry, nullptr}; }

// Calls `launch(gpu, kernel)`, or `launch(gpu, kernel, svc)` for a launcher that also needs
// the service (its device, for a plan).
template <typename Launch>
void call_launcher(Launch& launch, const GpuBackend& gpu, KernelHandle kernel,
                   KernelService& svc) {
  if constexpr (std::is_invocable_v<Launch&, const GpuBackend&, KernelHandle, KernelService&>) {
    launch(gpu, kernel, svc);
  } else {
    launch(gpu, kernel);
  }
}

// The kernel of `entry` for a C entry. On its first use `guard_pass()` runs before the
// compile, so that a bad argument is refused as such; once the kernel is loaded, the
// checks the launcher makes before every launch are the only ones (the pass would repeat
// them on each call).
template <typename GuardPass>
KernelHandle kernel_after_guards(KernelService& svc, const char* entry, metrale_status& phase,
                                 GuardPass&& guard_pass) {
  if (const std::optional<KernelHandle> loaded = svc.loaded_kernel(entry)) return *loaded;
  guard_pass(GuardOnlyGpu(svc.gpu()), guard_pass_handle(entry));
  phase = METRALE_ERROR_COMPILE;
  const KernelHandle kernel = svc.kernel(entry);
  phase = METRALE_ERROR_INVALID_ARGUMENT;
  return kernel;
}

// The common shape of a launcher entry: `entry` resolved after the guard pass (compiling
// on first use), then the launcher run with the launch stage tracked.
template <typename Launch>
metrale_status launch_entry(metrale_service* handle, std::string_view fn, const char* entry,
                            Launch&& launch) noexcept {
  return run([&](metrale_status& phase) {
    KernelService& svc = service(handle, fn);
    const KernelHandle kernel =
        kernel_after_guards(svc, entry, phase, [&](const GpuBackend& gpu, KernelHandle k) {
          call_launcher(launch, gpu, k, svc);
        });
    const TrackedGpu gpu(svc.gpu(), svc.compile_only(), phase);
    call_launcher(launch, gpu, kernel, svc);
  });
}

}  // namespace metrale::capi
