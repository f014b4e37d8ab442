// The library entries the benchmark times. This table is the one place to list them: a
// new entry with the contiguous launcher signature (e.g. a split-K variant) is one more
// line in entries.cpp, once its variant is in kernel_variants().
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "metrale/w8a16_gemm_m16.hpp"
#include "metrale/w8a16_gemm_m16_auto.hpp"
#include "metrale/w8a16_gemm_m16_streamk.hpp"

namespace metrale::bench {

// What the runner lends the entries that need more than their operands.
struct EntryResources {
  StreamKWorkspace workspace;  // zeroed once, large enough for any default shape
  M16PlanDevice device;  // the device's SMs (which size the grids) and DRAM bandwidth
  KernelLookup kernels;  // the runner's module cache, for w8a16_gemm_m16_auto
};

// A launcher with contiguous operands that also takes the runner's resources.
using ResourcedM16Gemm = void (*)(const GpuBackend& gpu, KernelHandle kernel, DevicePtr input,
                                  DevicePtr weight, DevicePtr block_scale, DevicePtr output,
                                  std::uint32_t m, std::uint32_t n, std::uint32_t k,
                                  const EntryResources& resources, StreamHandle stream);

struct BenchEntry {
  std::string_view name;      // as reported, e.g. "w8a16_gemm_m16_splitk/4"
  std::string_view kernel;    // kernel entry, as ModuleCache::kernel(kernel) finds it
  std::uint32_t split;        // K split (1 for the seed's entries)
  ContiguousM16Gemm launch;   // its runtime launcher, contiguous operands
  ResourcedM16Gemm launch_with = nullptr;  // used instead of `launch` where set
};

// Every tensor-core entry, in table order (the default of --entry).
std::span<const BenchEntry> bench_entries();

// Tuning points (the streaming entries' tile rows, ring stages and CTAs per SM; the skinny
// entry's other warp counts): timed only when --entry names them.
std::span<const BenchEntry> tuning_entries();

// "a,b" -> those entries in the given order; throws Error naming the known ones.
std::vector<BenchEntry> parse_entries(std::string_view list);

}  // namespace metrale::bench
