#include "metrale/m16_plan_grid.hpp"

#include "metrale/error.hpp"
#include "metrale/kernel_launch.hpp"
#include "metrale/w8a16_gemm_m16.hpp"
#include "metrale/w8a16_gemm_m16_skinny.hpp"
#include "metrale/w8a16_gemm_m16_stream.hpp"
#include "metrale/w8a16_gemm_m16_streamk.hpp"

namespace metrale {

M16PlanGrid m16_plan_grid(const M16Plan& plan, std::uint32_t n, std::uint32_t k) {
  if (plan.entry == "w8a16_gemm_m16_streamk") {
    const std::uint32_t ctas = w8a16_gemm_m16_streamk_grid_ctas(n, k, plan.ctas);
    return {ctas, w8a16_gemm_m16_streamk_workspace_bytes(n, ctas)};
  }
  if (plan.entry.starts_with("w8a16_gemm_m16_skinny")) {
    // The one-block kernel's chunks are of one block per warp whatever warp_blocks says. A
    // cluster's chunks take the workspace too: the launcher falls back to it where the
    // device runs no cluster.
    const std::uint32_t blocks = plan.entry == "w8a16_gemm_m16_skinny" ? 1 : plan.warp_blocks;
    return {w8a16_gemm_m16_skinny_grid_ctas(plan.entry, n, k, plan.warps, blocks),
            w8a16_gemm_m16_skinny_workspace_bytes(n, k, plan.warps, blocks)};
  }
  // The tiled entries: a CTA per tile of N and split of K, no workspace.
  if (plan.entry == "w8a16_gemm_m16" || plan.entry == "w8a16_gemm_m16_splitk") {
    return {std::uint64_t{div_ceil(n, W8A16_GEMM_M16_N_TILE)} * plan.split, 0};
  }
  if (plan.entry == "w8a16_gemm_m16_n64") return {div_ceil(n, W8A16_GEMM_M16_N_TILE_WIDE), 0};
  if (plan.entry == "w8a16_gemm_m16_stream") {
    return {std::uint64_t{div_ceil(n, stream_tile_rows(n))} * plan.split, 0};
  }
  fail("m16_plan_grid: the plan names '{}', which no launcher runs", plan.entry);
}

}  // namespace metrale
