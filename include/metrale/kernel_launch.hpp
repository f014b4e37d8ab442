// The seed's `KernelLaunch` builder and `div_ceil`. Arguments are stored with the exact
// sizes of the kernel's parameters (8-byte pointers, 4-byte u32) in call order and
// handed to the backend in one launch.
#pragma once

#include <array>
#include <cstdint>

#include "metrale/gpu_backend.hpp"

namespace metrale {

// In 64 bits: a + b - 1 would wrap for N near 2^32 and give a grid of no CTA.
constexpr std::uint32_t div_ceil(std::uint32_t a, std::uint32_t b) {
  return static_cast<std::uint32_t>((std::uint64_t{a} + b - 1) / b);
}

class KernelLaunch {
 public:
  static constexpr std::size_t kMaxArgs = 16;

  KernelLaunch(const GpuBackend& gpu, const KernelHandle& kernel) : gpu_(gpu), kernel_(kernel) {}

  KernelLaunch& grid(std::array<std::uint32_t, 3> g) {
    config_.grid = {g[0], g[1], g[2]};
    return *this;
  }
  KernelLaunch& block(std::array<std::uint32_t, 3> b) {
    config_.block = {b[0], b[1], b[2]};
    return *this;
  }
  KernelLaunch& cluster(std::array<std::uint32_t, 3> c) {
    config_.cluster = {c[0], c[1], c[2]};
    return *this;
  }
  KernelLaunch& shared_bytes(std::uint32_t bytes) {
    config_.shared_bytes = bytes;
    return *this;
  }
  KernelLaunch& programmatic_dependent(bool enabled) {
    config_.programmatic_dependent = enabled;
    return *this;
  }
  KernelLaunch& arg_ptr(DevicePtr p);
  KernelLaunch& arg_u32(std::uint32_t v);
  KernelLaunch& arg_f32(float v);
  // An argument passed by value from the caller's storage (e.g. a TensorMapBytes), which
  // must outlive launch().
  KernelLaunch& arg_bytes(const void* value, std::size_t size);

  // Launches on `stream`; throws Error if the backend refuses.
  void launch(StreamHandle stream);

 private:
  // The next argument's index; throws Error when all kMaxArgs are taken.
  std::size_t next_slot() const;
  KernelLaunch& push(const void* value, std::size_t size);

  const GpuBackend& gpu_;
  KernelHandle kernel_;
  LaunchConfig config_{};
  // Values live here (8-byte slots), and launch() points the driver at them only then:
  // a copied or moved builder hands over its own storage, never the original's.
  std::array<std::uint64_t, kMaxArgs> storage_{};
  // Argument i is storage_[i] where external_[i] is null, else the caller's bytes there.
  std::array<const void*, kMaxArgs> external_{};
  std::array<std::size_t, kMaxArgs> sizes_{};
  std::size_t count_ = 0;
};

}  // namespace metrale
