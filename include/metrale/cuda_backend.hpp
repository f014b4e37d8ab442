// GpuBackend over the CUDA Driver API. libcuda.so.1 is opened at run time, so programs
// linking the library start on machines with no driver; there, constructing a
// CudaBackend throws Error("no CUDA driver: libcuda.so.1 not found ...").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "metrale/gpu_backend.hpp"

namespace metrale {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  std::size_t l2_bytes = 0;
  int shared_optin_bytes = 0;  // shared memory one block may opt in to
  std::size_t total_memory = 0;
  // Peak DRAM bandwidth in GB/s, from the memory clock and bus width the driver reports
  // (double data rate); 0 where it reports neither.
  std::uint32_t dram_gbps = 0;
  std::string target() const { return "sm_" + std::to_string(cc_major * 10 + cc_minor); }
};

struct KernelAttributes {
  int registers = 0;
  int local_bytes = 0;
  int static_shared_bytes = 0;
  int max_threads_per_block = 0;
};

// Number of CUDA devices; throws Error when the driver is missing or fails to start.
int cuda_device_count();

// Why no CUDA device can be used here, or an empty string when one can.
std::string cuda_unavailable_reason();

// The compile target ("sm_90") of device `ordinal`, read from the driver without creating
// or retaining a context; throws Error when there is no driver or no such device.
std::string cuda_device_target(int ordinal);

class CudaBackend final : public GpuBackend {
 public:
  // Retains the primary context of device `ordinal`.
  explicit CudaBackend(int ordinal = 0);
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  const DeviceInfo& info() const { return info_; }

  ContextId context() const override;
  std::string target() const override { return info_.target(); }
  std::unique_ptr<LoadedModule> load_module(std::span<const char> image,
                                            std::string_view label) const override;
  void launch(const KernelHandle& kernel, const LaunchConfig& config,
              std::span<const KernelArg> args, StreamHandle stream) const override;
  void check_not_capturing(std::string_view module) const override;
  TensorMapBytes tensor_map_2d(const TensorMap2dRequest& request) const override;

  KernelAttributes attributes(const KernelHandle& kernel) const;

  // Makes this backend's context current on the calling thread and leaves it so, for
  // tools that make driver calls of their own. The backend's own calls (launches, module
  // loads, memory) give the thread back the context it had current.
  void make_current() const;

  // Memory and synchronisation helpers for tools, tests and examples.
  DevicePtr allocate(std::size_t bytes) const;
  void release(DevicePtr p) const noexcept;
  void upload(DevicePtr dst, const void* src, std::size_t bytes) const;
  void download(void* dst, DevicePtr src, std::size_t bytes) const;
  void fill_bytes(DevicePtr dst, std::uint8_t value, std::size_t bytes) const;
  void synchronize() const;

 private:
  DeviceInfo info_;
  int device_ = 0;
  void* context_ = nullptr;  // CUcontext (the device's primary context)
};

// Device memory owned for a scope.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const CudaBackend& gpu, std::size_t bytes)
      : gpu_(&gpu), ptr_(gpu.allocate(bytes)), bytes_(bytes) {}
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept : gpu_(o.gpu_), ptr_(o.ptr_), bytes_(o.bytes_) {
    o.gpu_ = nullptr;
  }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      gpu_ = o.gpu_;
      ptr_ = o.ptr_;
      bytes_ = o.bytes_;
      o.gpu_ = nullptr;
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  DevicePtr get() const { return ptr_; }
  std::size_t size() const { return bytes_; }

 private:
  void reset() noexcept {
    if (gpu_ != nullptr) gpu_->release(ptr_);
    gpu_ = nullptr;
  }
  const CudaBackend* gpu_ = nullptr;
  DevicePtr ptr_{};
  std::size_t bytes_ = 0;
};

}  // namespace metrale
