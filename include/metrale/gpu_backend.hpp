// The runtime's backend interface, as the launchers see it (the seed's `GpuBackend`,
// `DevicePtr`, `KernelHandle`). CudaBackend implements it with the CUDA Driver API;
// tests implement it with a recorder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace metrale {

// A device address (CUdeviceptr).
struct DevicePtr {
  std::uint64_t address = 0;
  constexpr DevicePtr() = default;
  constexpr explicit DevicePtr(std::uint64_t a) : address(a) {}
  friend constexpr DevicePtr operator+(DevicePtr p, std::uint64_t bytes) {
    return DevicePtr(p.address + bytes);
  }
  friend constexpr bool operator==(DevicePtr, DevicePtr) = default;
};

// A CUDA stream, as the seed passes it (u64; 0 is the legacy default stream).
using StreamHandle = std::uint64_t;

// Identifies the context a module was loaded in; handles never cross contexts.
using ContextId = std::uintptr_t;

// A launchable entry of a loaded module. Cheap to copy; valid while the module cache
// that handed it out lives.
struct KernelHandle {
  void* function = nullptr;     // CUfunction
  ContextId context = 0;        // the context the module lives in
  const char* name = nullptr;   // entry name, for messages
  // A token-split entry's build for m in 9..16 (kernel_variants.hpp), which its launcher
  // takes for m > 8; then `function` is the build for m <= 8. nullptr otherwise.
  void* function_above8 = nullptr;
};

// The handle that runs `h`'s build for m in 9..16: function_above8 as its function (null
// when `h` has no such build).
inline KernelHandle above8_build(const KernelHandle& h) {
  KernelHandle above8 = h;
  above8.function = h.function_above8;
  return above8;
}

struct Dim3 {
  std::uint32_t x = 1, y = 1, z = 1;
};

// One packed kernel argument: a pointer to the value and its exact size.
struct KernelArg {
  const void* value;
  std::size_t size;
};

struct LaunchConfig {
  Dim3 grid;
  Dim3 block;
  std::uint32_t shared_bytes = 0;
  Dim3 cluster{0, 0, 0};                 // x == 0: no cluster launch
  bool programmatic_dependent = false;   // PDL: may start before the previous kernel ends
};

// A 2-D tiled tensor map (a CUtensorMap: 128 opaque bytes passed by value to a kernel):
// `rows` rows of `cols` elements of `element_bytes` bytes, `row_pitch` bytes apart,
// copied in boxes of box_cols x box_rows; rows past the end arrive as zeros.
struct TensorMap2dRequest {
  DevicePtr base;
  std::uint32_t element_bytes = 1;  // 1 or 2
  std::uint64_t cols = 0;
  std::uint64_t rows = 0;
  std::uint64_t row_pitch = 0;
  std::uint32_t box_cols = 0;
  std::uint32_t box_rows = 0;
};
struct alignas(64) TensorMapBytes {
  std::uint64_t opaque[16] = {};
};

// The request's fields packed into a map's bytes, for backends that launch nothing (tests,
// the compile-only service, the host-cost measurement): no kernel can copy with it.
TensorMapBytes packed_tensor_map_request(const TensorMap2dRequest& request);

// A module loaded into one context.
class LoadedModule {
 public:
  virtual ~LoadedModule() = default;
  // Throws Error when the module has no entry of that name.
  virtual void* function(std::string_view entry) const = 0;
  // Reads a 32-bit `__device__` global back (used to check compile-time constants).
  virtual std::uint32_t read_global_u32(std::string_view name) const = 0;
};

class GpuBackend {
 public:
  virtual ~GpuBackend() = default;

  // The context launches go to; a KernelHandle from another context is refused.
  virtual ContextId context() const = 0;

  // The compile target of this backend's device, e.g. "sm_90".
  virtual std::string target() const = 0;

  // Loads a CUBIN (or PTX) image into this backend's context.
  virtual std::unique_ptr<LoadedModule> load_module(std::span<const char> image,
                                                    std::string_view label) const = 0;

  // Throws Error naming warm_up() when a CUDA graph capture that forbids unsafe calls is
  // in progress: a module must not be built then (it would compile, load and allocate
  // inside the capture). Called on the cold path only.
  virtual void check_not_capturing(std::string_view module) const { (void)module; }

  // Encodes a tensor map for kernels that copy with the tensor memory accelerator. Pure:
  // a wrapping backend that forgot to forward it would hand kernels a map the copy
  // engine faults on (CUDA_ERROR_ILLEGAL_INSTRUCTION).
  virtual TensorMapBytes tensor_map_2d(const TensorMap2dRequest& request) const = 0;

  // Launches `kernel` with `args` packed in order on `stream`.
  virtual void launch(const KernelHandle& kernel, const LaunchConfig& config,
                      std::span<const KernelArg> args, StreamHandle stream) const = 0;
};

}  // namespace metrale
