// Why a file of its own: the records' layout is the kernel's (w8a16_gemm_m16_streamk.cu,
// Timeline), and only this reader and tools/timeline_summary.py need to know it.
#include "metrale/bench/timeline.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "metrale/error.hpp"

namespace metrale::bench {
namespace {

constexpr std::uint64_t kTag = 0x544C;
constexpr std::uint64_t kSlotBytes = 8192;  // the 32-bit partial words of one CTA
constexpr std::uint32_t kWords = 8;         // words per record

}  // namespace

TimelineWriter::TimelineWriter(const std::string& path) : path_(path), out_(path) {
  ensure(out_.good(), "--timeline {}: cannot open the file for writing", path);
  out_ << "# layer m entry cta sm units adds_up entry_ns waited_ns first_landed_ns "
          "last_landed_ns loop_end_ns end_ns (times from the earliest entry of the launch)\n";
}

std::uint32_t TimelineWriter::take(const CudaBackend& gpu, DevicePtr workspace,
                                   std::uint64_t workspace_bytes, std::uint32_t sm_count,
                                   std::string_view label, std::uint32_t m,
                                   std::string_view entry) {
  for (std::uint32_t per_sm = 1; per_sm <= 4; ++per_sm) {
    const std::uint64_t grid = std::uint64_t{per_sm} * sm_count;
    const std::uint64_t offset = grid * kSlotBytes;
    const std::uint64_t bytes = grid * kWords * 8;
    if (offset + bytes > workspace_bytes) break;
    std::vector<std::uint64_t> words(grid * kWords);
    gpu.download(words.data(), workspace + offset, bytes);
    const bool found =
        std::any_of(words.begin(), words.end(), [](std::uint64_t w) { return w != 0; });
    if (!found) continue;
    gpu.fill_bytes(workspace + offset, 0, bytes);
    std::uint64_t t0 = ~std::uint64_t{0};
    for (std::uint64_t c = 0; c < grid; ++c) {
      if (words[c * kWords] >> 48 == kTag) t0 = std::min(t0, words[c * kWords + 2]);
    }
    std::string layer(label);  // one column: "Llama-3-8B_qkv"
    std::replace(layer.begin(), layer.end(), ' ', '_');
    std::uint32_t records = 0;
    for (std::uint64_t c = 0; c < grid; ++c) {
      const std::uint64_t* r = &words[c * kWords];
      if (r[0] >> 48 != kTag || ((r[0] >> 24) & 0xFFFFFF) != grid || (r[0] & 0xFFFFFF) != c) {
        continue;
      }
      const auto at = [&](std::uint32_t f) { return static_cast<std::int64_t>(r[f] - t0); };
      out_ << fmt::format("{} {} {} {} {} {} {} {} {} {} {} {} {}\n", layer, m, entry, c,
                          r[1] & 0xFFFFFFFF, (r[1] >> 32) & 0x7FFFFFFF, r[1] >> 63, at(2),
                          at(3), at(4), at(5), at(6), at(7));
      ++records;
    }
    ensure(out_.good(), "--timeline {}: write failed", path_);
    return records;
  }
  return 0;
}

}  // namespace metrale::bench
