// bench --timeline: the per-CTA records that stream-K built with METRALE_DIAG_TIMELINE
// leaves in its workspace (w8a16_gemm_m16_streamk.cu), read after an entry's last launch
// and written out one line per CTA.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>

#include "metrale/cuda_backend.hpp"

namespace metrale::bench {

class TimelineWriter {
 public:
  // Truncates `path` and writes the column header.
  explicit TimelineWriter(const std::string& path);

  // Appends the records of the last launch of `entry` on the layer `label`, if the
  // workspace holds any for a grid of 1..4 CTAs per SM, and zeroes them (the skinny
  // entries need the workspace zero). Returns the number of records found.
  std::uint32_t take(const CudaBackend& gpu, DevicePtr workspace, std::uint64_t workspace_bytes,
                     std::uint32_t sm_count, std::string_view label, std::uint32_t m,
                     std::string_view entry);

 private:
  std::string path_;
  std::ofstream out_;
};

}  // namespace metrale::bench
