// The library entries the benchmark times. This table is the one place to list them: a
// new entry with the contiguous launcher signature is one more line in entries.cpp, once
// its variant is in kernel_variants(). The split-K entry is also reachable with a given
// tile and ring, "w8a16_gemm_m16_splitk/S:rR:sT", for tuning runs.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "metrale/w8a16_gemm_m16.hpp"
#include "metrale/w8a16_gemm_m16_splitk.hpp"

namespace metrale::bench {

struct BenchEntry {
  std::string name;           // as reported, e.g. "w8a16_gemm_m16_splitk/4"
  std::string_view kernel;    // kernel entry, as ModuleCache::kernel(kernel) finds it
  std::uint32_t split = 1;    // K split (1 for the seed's entries)
  ContiguousM16Gemm launch = nullptr;  // the seed's launchers; null for the split-K entry
  SplitkTuning tuning{};      // the split-K entry's tile and ring (0: the launcher's)

  void run(const GpuBackend& gpu, KernelHandle handle, DevicePtr input, DevicePtr weight,
           DevicePtr block_scale, DevicePtr output, std::uint32_t m, std::uint32_t n,
           std::uint32_t k, StreamHandle stream) const;
};

// Every tensor-core entry, in table order (the default of --entry).
std::span<const BenchEntry> bench_entries();

// "a,b" -> those entries in the given order; throws Error naming the known ones.
std::vector<BenchEntry> parse_entries(std::string_view list);

}  // namespace metrale::bench
