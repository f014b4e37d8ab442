// What the GPU tests share: one backend and module cache for device 0, device-side
// random operands, poisoned outputs with guard regions, and the checks against the
// scalar reference and the accuracy budget.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "metrale/cuda_backend.hpp"
#include "metrale/kernel_launch.hpp"
#include "metrale/w8a16_gemm_m16_auto.hpp"
#include "metrale/module_cache.hpp"
#include "metrale/oracle.hpp"
#include "metrale/w8a16_gemm_m16_streamk.hpp"

namespace metrale::test {

struct GpuContext {
  GpuContext();
  CudaBackend backend{0};
  ModuleCache cache{backend};
  DeviceBuffer streamk_buffer;  // zeroed once; every stream-K launch leaves it zeroed
  StreamKWorkspace streamk_workspace() const {
    return {streamk_buffer.get(), streamk_buffer.size()};
  }
  std::uint32_t sm_count() const { return static_cast<std::uint32_t>(backend.info().sm_count); }
  // What the library's own calls plan for on this device (plan_device on a service).
  M16PlanDevice plan_device() const { return metrale::plan_device(backend.info()); }
};

// Created on first use; lives for the process.
GpuContext& gpu();

// A test's own kernel source (`name`.cu) compiled by NVRTC for device 0 and loaded there.
std::unique_ptr<LoadedModule> load_test_kernels(const std::string& name,
                                                const std::string& source);

// Value ranges of one random problem.
struct Ranges {
  float activation_scale = 1.0f;  // activations uniform in [-scale, scale)
  std::uint32_t fp8_max_magnitude = 0x7E;
  float scale_lo = 1.0f / 1024, scale_hi = 1.0f / 64;
};

// fill_u16 of `count` zeros at `out`, one CTA of 32 threads, ready to launch: the smallest
// launch of a loaded module, for tests of where and how a launch goes.
inline KernelLaunch fill_u16_launch(const GpuBackend& gpu, const KernelHandle& fill,
                                    DevicePtr out, std::uint32_t count) {
  KernelLaunch launch(gpu, fill);
  launch.grid({1, 1, 1}).block({32, 1, 1}).arg_ptr(out).arg_u32(count).arg_u32(0);
  return launch;
}

// Output poison: a BF16 NaN no kernel writes.
inline constexpr std::uint16_t kPoison = 0xFFFF;

// One problem: operands filled with fresh random data, outputs poisoned, each output
// buffer followed by a guard region that must stay poisoned.
struct Problem {
  std::uint32_t m, n, k, a_row_stride, c_row_stride;
  DeviceBuffer input, weight, scale, out, ref;
  std::size_t out_elems;  // elements in out/ref, guards included

  Problem(std::uint32_t m, std::uint32_t n, std::uint32_t k, std::uint32_t a_row_stride,
          std::uint32_t c_row_stride, std::uint32_t seed, const Ranges& ranges = {});
  // Fresh random operands (new seed) and re-poisoned outputs, same shape.
  void refill(std::uint32_t seed, const Ranges& ranges = {});
  void poison();
  std::vector<std::uint16_t> download_out() const;
  std::vector<std::uint16_t> download_ref() const;
  // Runs the scalar strided reference into `ref`.
  void run_reference();
};

// Budget check of `got` against `ref` over [m, n] with pitch c_row_stride; every element
// outside [m, n] (pitch gaps, rows >= m, the guard) must still hold the poison.
struct OutputCheck {
  BudgetReport budget;
  std::uint64_t written_outside = 0;  // poisoned elements outside [m, n] that changed
};
OutputCheck check_output(const Problem& p, const std::vector<std::uint16_t>& got,
                         const std::vector<std::uint16_t>& ref);

// The tensor-core entries, launched on a problem through the library's launchers.
struct TcEntry {
  std::string name;
  bool strided;
  std::function<void(const Problem&, StreamHandle)> launch;
};

// The skinny entry on `warps` warps of one (or, `two_blocks`, two) 128-K blocks each;
// with `cluster`, its chunks of K as one cluster (M16LaunchOptions::chunk_cluster); at
// most `max_ctas_per_sm` of its CTAs on an SM (0: no cap).
TcEntry skinny_entry(std::uint32_t warps, bool two_blocks = false, bool pdl = false,
                     bool cluster = false, std::uint32_t max_ctas_per_sm = 0);

// The deep skinny kernel (`kernel`: any of its forms) on `warps` warps of `warp_blocks`
// blocks each, at most `max_ctas_per_sm` of its CTAs on an SM (0: no cap).
TcEntry skinny_deep_entry(std::uint32_t warps, std::uint32_t warp_blocks, bool pdl = false,
                          const char* kernel = "w8a16_gemm_m16_skinny_deep",
                          std::uint32_t max_ctas_per_sm = 0);
const std::vector<TcEntry>& tc_entries();

}  // namespace metrale::test
