#include "metrale/bench/plan_name.hpp"

#include <fmt/format.h>

#include "metrale/w8a16_gemm_m16_skinny.hpp"

namespace metrale::bench {

std::string plan_entry_name(const M16Plan& plan, std::uint32_t k, std::uint32_t sm_count) {
  if (plan.entry == "w8a16_gemm_m16_splitk" || plan.entry == "w8a16_gemm_m16_stream") {
    return fmt::format("{}/{}", plan.entry, plan.split);
  }
  if (plan.entry.starts_with("w8a16_gemm_m16_skinny_deep") &&
      w8a16_gemm_m16_skinny_chunks(k, plan.warps, plan.warp_blocks) > 1) {
    return fmt::format("{}/{}x{}{}", plan.entry, plan.warps, plan.warp_blocks,  // in chunks
                       plan.max_ctas_per_sm != 0 ? ".sp" : "");
  }
  if (plan.entry.starts_with("w8a16_gemm_m16_skinny")) {
    return fmt::format("{}/{}{}{}", plan.entry, plan.warps, plan.chunk_cluster ? ".cl" : "",
                       plan.max_ctas_per_sm != 0 ? ".sp" : "");
  }
  std::string name(plan.entry);
  if (plan.entry == "w8a16_gemm_m16_streamk" && plan.ctas != 2 * sm_count) {
    name += fmt::format(".c{}", plan.ctas / sm_count);
  }
  if (plan.stages != 0) name += fmt::format(".s{}", plan.stages);
  return name;
}

}  // namespace metrale::bench
