// The rules by which plan_m16_gemm (m16_plan.cpp) runs the deep skinny entry on one chunk
// of K, and the test of its PDL grids' spread; each definition (m16_plan_deep.cpp) carries
// the measurements it rests on (docs/performance.md, the items it names).
#pragma once

#include <cstdint>
#include <optional>

#include "metrale/w8a16_gemm_m16_skinny.hpp"

namespace metrale::m16_plan {

// Whether a PDL launch of `ctas` CTAs, of which the registers let an SM hold
// `by_registers`, is spread over the SMs: an even share of 2 to 6 CTAs per SM, below
// what the registers allow.
bool spreadable(std::uint64_t ctas, std::uint32_t sms, std::uint32_t by_registers);

// Whether the deep entry was measured at depth k for m tokens on `bytes` of weights.
bool deep_depth_measured(std::uint32_t m, std::uint32_t k, std::uint64_t bytes, bool pdl);

// With PDL up to 8 tokens on 16-64 MiB where only 2-warp CTAs of the deep entry fit at
// once: the warps (8 or 4) that get 2 or 3 blocks each, else none. `form`:
// w8a16_gemm_m16_skinny_deep_form of the shape.
std::optional<std::uint32_t> shallow_layer_warps(std::uint32_t m, std::uint32_t n,
                                                 std::uint32_t k, bool pdl,
                                                 const SkinnyDeepForm& form);

// The deep entry's one-chunk form `form` where it suits the shape, else none.
std::optional<SkinnyDeepForm> deep_form_if_suited(std::uint32_t m, std::uint32_t n,
                                                  std::uint32_t k, std::uint32_t sms, bool pdl,
                                                  const SkinnyDeepForm& form);

// Whether a device of `sms` SMs and `dram_gbps` of peak DRAM bandwidth (0: not known) has
// under kNarrowDramGbpsPerSm per SM (an H100 SXM: 25; an H200: 36 as its driver reports it).
inline constexpr std::uint32_t kNarrowDramGbpsPerSm = 31;
bool narrow_dram(std::uint32_t dram_gbps, std::uint32_t sms);

// Without PDL up to 8 tokens on layers of 64 MiB and more with K of 4096 and more, on a
// device of narrow DRAM bandwidth per SM (`narrow`, narrow_dram's answer for the device):
// `form` where it has 4 warps or more and its CTAs fit at once, else CTAs of 8 warps in
// waves where those fill 80 % of the waves' slots; none elsewhere.
std::optional<SkinnyDeepForm> deep_form_on_narrow_dram(std::uint32_t m, std::uint32_t n,
                                                       std::uint32_t k, std::uint32_t sms,
                                                       bool narrow, bool pdl,
                                                       const SkinnyDeepForm& form);

}  // namespace metrale::m16_plan
