// The library entries the benchmark times. This table is the one place to list them: a
// new entry with the contiguous launcher signature (e.g. a split-K variant) is one more
// line in entries.cpp, once its variant is in kernel_variants().
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "metrale/w8a16_gemm_m16.hpp"

namespace metrale::bench {

struct BenchEntry {
  std::string_view name;      // kernel entry, as ModuleCache::kernel(name) finds it
  ContiguousM16Gemm launch;   // its runtime launcher
};

// Every tensor-core entry, in table order (the default of --entry).
std::span<const BenchEntry> bench_entries();

// "a,b" -> those entries in the given order; throws Error naming the known ones.
std::vector<BenchEntry> parse_entries(std::string_view list);

}  // namespace metrale::bench
