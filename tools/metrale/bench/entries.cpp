#include "metrale/bench/entries.hpp"

#include <array>

#include "metrale/error.hpp"

namespace metrale::bench {

std::span<const BenchEntry> bench_entries() {
  static constexpr std::array kEntries = {
      BenchEntry{"w8a16_gemm_m16", &w8a16_gemm_m16},
      BenchEntry{"w8a16_gemm_m16_n64", &w8a16_gemm_m16_n64},
  };
  return kEntries;
}

std::vector<BenchEntry> parse_entries(std::string_view list) {
  std::vector<BenchEntry> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t end = std::min(list.find(',', start), list.size());
    const std::string_view name = list.substr(start, end - start);
    const BenchEntry* found = nullptr;
    std::string known;
    for (const BenchEntry& e : bench_entries()) {
      if (e.name == name) found = &e;
      known += (known.empty() ? "" : ", ") + std::string(e.name);
    }
    ensure(found != nullptr, "--entry: no benchmarked entry named '{}' (known: {})", name,
           known);
    out.push_back(*found);
    start = end + 1;
  }
  return out;
}

}  // namespace metrale::bench
