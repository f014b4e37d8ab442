// The grid and workspace of a plan's launch (plan_m16_gemm), as its launcher sizes them:
// for callers that allocate a plan's workspace before they launch it, and for tools that
// print what a plan runs. tests/host/test_plan_grid.cpp holds it to the launchers.
#pragma once

#include <cstdint>

#include "metrale/m16_plan.hpp"

namespace metrale {

struct M16PlanGrid {
  std::uint64_t ctas = 0;             // CTAs the launch's grid holds
  std::uint64_t workspace_bytes = 0;  // the StreamKWorkspace it needs (0: none)
};

// `plan` as plan_m16_gemm returns it for n x k; the launch options the plan names
// (chunk_cluster, max_ctas_per_sm) change neither figure.
M16PlanGrid m16_plan_grid(const M16Plan& plan, std::uint32_t n, std::uint32_t k);

}  // namespace metrale
