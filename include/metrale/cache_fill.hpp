// Ahead-of-time compilation into the persistent cache, with no device: what
// `metrale compile` and a compile-only KernelService's warm_up do for each variant.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "metrale/disk_cache.hpp"
#include "metrale/kernel_variants.hpp"

namespace metrale {

struct CacheFill {
  std::vector<char> image;  // CUBIN, or PTX for a compute_XY target
  bool from_cache = false;  // a valid entry was already there
  bool stored = false;      // a fresh compile was written to the cache
  std::string ptxas_report; // a fresh sm_XY compile's, where asked (see CompileRequest)
};

// The image of `variant` for `target`: the cache's entry when it holds a valid one, else
// compiled by NVRTC and stored (a store that fails leaves stored = false). `ptxas_report`
// asks ptxas's report of a fresh compile, which leaves the image and the key as they are.
CacheFill compile_through_cache(DiskCache& cache, const KernelVariant& variant,
                                std::string_view target, bool ptxas_report = false);

}  // namespace metrale
