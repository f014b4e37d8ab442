// The bench entry that runs a plan: the name `metrale bench --entry` takes for the launch
// plan_m16_gemm chose, so that the benchmark can time the plan's choice and `metrale plan`
// can print it.
#pragma once

#include <cstdint>
#include <string>

#include "metrale/m16_plan.hpp"

namespace metrale::bench {

// Split entries are named with their split, even a split of 1; the skinny entries with
// their warps per CTA (the deep one on one chunk of K, or as "/WxB" in chunks, as the plan
// runs it), ".cl" for chunks as a cluster and ".sp" for a grid spread over the SMs
// (M16Plan::max_ctas_per_sm); stream-K with its CTAs per SM (".cC" unless it is the
// default two) and its ring stages (".sS" unless the launcher's default). No "+pdl": the
// caller appends it for a plan made with PDL.
std::string plan_entry_name(const M16Plan& plan, std::uint32_t k, std::uint32_t sm_count);

}  // namespace metrale::bench
