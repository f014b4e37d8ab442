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

namespace metrale::bench {

struct BenchEntry {
  std::string_view name;      // as reported, e.g. "w8a16_gemm_m16_splitk/4"
  std::string_view kernel;    // kernel entry, as ModuleCache::kernel(kernel) finds it
  std::uint32_t split;        // K split (1 for the seed's entries)
  ContiguousM16Gemm launch;   // its runtime launcher, contiguous operands
};

// Every tensor-core entry, in table order (the default of --entry).
std::span<const BenchEntry> bench_entries();

// Tuning points of the streaming entry (fixed tile rows / ring stages): timed only when
// --entry names them.
std::span<const BenchEntry> tuning_entries();

// "a,b" -> those entries in the given order; throws Error naming the known ones.
std::vector<BenchEntry> parse_entries(std::string_view list);

}  // namespace metrale::bench
