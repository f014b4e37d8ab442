// The options every M16 launcher takes, and plan_m16_gemm with them.
#pragma once

#include <cstdint>

namespace metrale {

// Opt-in launch behaviour of the M16 launchers (split-K, streaming, stream-K, skinny), and
// what plan_m16_gemm plans for.
struct M16LaunchOptions {
  // Programmatic dependent launch (sm_90): the kernel may start while the preceding
  // kernel of the stream still runs, loading its first weights and scales, and waits for
  // that kernel only before reading the activations and writing the output. The caller
  // promises that the preceding kernel does not write this launch's weights or scales.
  bool programmatic_dependent = false;
  // The skinny entry (w8a16_gemm_m16_skinny): the chunks of K of a row group run as one
  // thread-block cluster and hand their partials to chunk 0 through its shared memory
  // instead of the workspace in L2, where the device and the chunking allow it (sm_90
  // and later, 2 to 8 chunks); elsewhere, and for the other entries, it changes nothing.
  // The same sums in the same order: the results are bit-identical either way.
  bool chunk_cluster = false;
  // The skinny and deep skinny entries: at most this many of the launch's CTAs on one SM
  // (0: as many as its registers allow), enforced through the dynamic shared memory each
  // CTA asks for (sm_75 and later; the same results). With PDL the next launch's CTAs
  // start early in the slots a launch leaves free; capped at an even share of the grid,
  // the launches take turns on every SM instead (docs/performance.md, item 94). The plan
  // sets it (M16Plan::max_ctas_per_sm).
  std::uint32_t max_ctas_per_sm = 0;
};

}  // namespace metrale
