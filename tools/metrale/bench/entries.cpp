#include "metrale/bench/entries.hpp"

#include <charconv>
#include <vector>

#include "metrale/error.hpp"

namespace metrale::bench {
namespace {

constexpr std::string_view kSplitk = "w8a16_gemm_m16_splitk";

BenchEntry splitk(std::uint32_t split, SplitkTuning tuning = {}) {
  std::string name = std::string(kSplitk) + "/" + std::to_string(split);
  if (tuning.rows != 0) name += ":r" + std::to_string(tuning.rows);
  if (tuning.stages != 0) name += ":s" + std::to_string(tuning.stages);
  return BenchEntry{name, kSplitk, split, nullptr, tuning};
}

std::uint32_t parse_u32(std::string_view text, std::string_view what, std::string_view name) {
  std::uint32_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  ensure(ec == std::errc() && end == text.data() + text.size() && !text.empty(),
         "--entry: '{}': {} '{}' is not a number", name, what, text);
  return v;
}

// "w8a16_gemm_m16_splitk/S[:rR][:sT]"; the launcher checks the values when it runs.
BenchEntry parse_splitk(std::string_view name) {
  std::string_view rest = name.substr(kSplitk.size() + 1);
  std::size_t colon = rest.find(':');
  const std::uint32_t split = parse_u32(rest.substr(0, colon), "split", name);
  SplitkTuning tuning;
  while (colon != std::string_view::npos) {
    rest = rest.substr(colon + 1);
    colon = rest.find(':');
    const std::string_view field = rest.substr(0, colon);
    ensure(!field.empty() && (field[0] == 'r' || field[0] == 's'),
           "--entry: '{}': expected :rROWS or :sSTAGES after the split", name);
    (field[0] == 'r' ? tuning.rows : tuning.stages) =
        parse_u32(field.substr(1), field[0] == 'r' ? "rows" : "stages", name);
  }
  return splitk(split, tuning);
}

}  // namespace

void BenchEntry::run(const GpuBackend& gpu, KernelHandle handle, DevicePtr input,
                     DevicePtr weight, DevicePtr block_scale, DevicePtr output,
                     std::uint32_t m, std::uint32_t n, std::uint32_t k,
                     StreamHandle stream) const {
  if (launch != nullptr) {
    launch(gpu, handle, input, weight, block_scale, output, m, n, k, stream);
  } else {
    w8a16_gemm_m16_splitk(gpu, handle, input, weight, block_scale, output, m, n, k, k, n,
                          split, stream, tuning);
  }
}

std::span<const BenchEntry> bench_entries() {
  static const std::vector<BenchEntry> kEntries = {
      BenchEntry{"w8a16_gemm_m16", "w8a16_gemm_m16", 1, &w8a16_gemm_m16, {}},
      BenchEntry{"w8a16_gemm_m16_n64", "w8a16_gemm_m16_n64", 1, &w8a16_gemm_m16_n64, {}},
      splitk(1),
      splitk(2),
      splitk(4),
      splitk(8),
  };
  return kEntries;
}

std::vector<BenchEntry> parse_entries(std::string_view list) {
  std::vector<BenchEntry> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t end = std::min(list.find(',', start), list.size());
    const std::string_view name = list.substr(start, end - start);
    start = end + 1;
    if (name.starts_with(std::string(kSplitk) + "/")) {
      out.push_back(parse_splitk(name));
      continue;
    }
    const BenchEntry* found = nullptr;
    std::string known;
    for (const BenchEntry& e : bench_entries()) {
      if (e.name == name) found = &e;
      known += (known.empty() ? "" : ", ") + e.name;
    }
    ensure(found != nullptr, "--entry: no benchmarked entry named '{}' (known: {}, or {}/S:rR:sT)",
           name, known, kSplitk);
    out.push_back(*found);
  }
  return out;
}

}  // namespace metrale::bench
