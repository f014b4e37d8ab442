// plan_m16_gemm's rule for devices of narrow DRAM bandwidth per SM (an H100 80GB HBM3:
// 3352 GB/s on 132 SMs, 25 GB/s per SM): without PDL up to 8 tokens, layers of 64 MiB and
// more run the deep entry's one chunk of K instead of stream-K (docs/performance.md, item
// 188); above 8 tokens without PDL stream-K takes one CTA per SM on fewer tiles than two
// per SM, and under 64 MiB the 16-row deep form on 8 warps stands in for the 32-row form on
// 16 (item 189). These cases pin the rules to the layers they were measured on, to their
// edges, and to the plan they leave alone: an H200's bandwidth, an unknown one, PDL.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <string_view>

#include "metrale/m16_plan.hpp"
#include "metrale/m16_plan_grid.hpp"
#include "metrale/w8a16_gemm_m16_auto.hpp"

using namespace metrale;

namespace {

constexpr std::uint32_t kH100Gbps = 3352;
constexpr std::uint32_t kH200Gbps = 4800;
constexpr std::string_view kDeep = "w8a16_gemm_m16_skinny_deep";
constexpr std::string_view kStreamK = "w8a16_gemm_m16_streamk";

bool same(const M16Plan& a, const M16Plan& b) {
  return a.entry == b.entry && a.split == b.split && a.ctas == b.ctas && a.stages == b.stages &&
         a.warps == b.warps && a.warp_blocks == b.warp_blocks &&
         a.chunk_cluster == b.chunk_cluster && a.max_ctas_per_sm == b.max_ctas_per_sm;
}

}  // namespace

TEST_CASE("plan_m16_gemm on narrow DRAM bandwidth: the deep entry from 64 MiB up to 8 tokens") {
  const M16PlanDevice h100{132, kH100Gbps};
  // {n, k, warps}: the layers of item 188 that the rule takes, on the form that fits every
  // CTA at once (4 or 8 warps) or on 8 warps in waves that are 80 % full.
  for (const auto& layer :
       {std::array<std::uint32_t, 3>{28672, 4096, 8}, {51200, 5120, 8}, {5120, 25600, 8},
        {7168, 16384, 8}, {36864, 7168, 8}, {7168, 18432, 8}, {10240, 8192, 4},
        {8192, 28672, 8}, {57344, 8192, 8}, {16384, 16384, 4}, {73728, 4608, 8},
        {4608, 36864, 8}, {5120, 16384, 8}, {16384, 8192, 4}, {24576, 4096, 8},
        {43008, 5120, 8}, {32768, 8192, 8}, {20480, 7168, 8}, {22528, 6144, 8},
        {30720, 4096, 8}, {35840, 5120, 8}}) {
    const std::uint32_t n = layer[0], k = layer[1], warps = layer[2];
    CAPTURE(n);
    CAPTURE(k);
    for (std::uint32_t m = 1; m <= 8; ++m) {
      CAPTURE(m);
      const M16Plan p = plan_m16_gemm(m, n, k, h100);
      CHECK(p.entry == kDeep);
      CHECK(p.warps == warps);
      CHECK(p.warp_blocks * p.warps * 128 >= k);
      CHECK(m16_plan_grid(p, n, k).workspace_bytes == 0);
      // The same layers on an H200, on a device of unknown bandwidth and with PDL:
      // stream-K, as before the rule.
      for (const M16PlanDevice other : {M16PlanDevice{132, kH200Gbps}, M16PlanDevice{132}}) {
        CHECK(plan_m16_gemm(m, n, k, other).entry == kStreamK);
      }
      CHECK(plan_m16_gemm(m, n, k, h100, M16LaunchOptions{true}).entry == kStreamK);
    }
  }
}

TEST_CASE("plan_m16_gemm on narrow DRAM bandwidth: stream-K on one CTA per SM above 8 tokens") {
  const M16PlanDevice h100{132, kH100Gbps};
  const M16PlanDevice h200{132, kH200Gbps};
  const M16LaunchOptions pdl{true};
  for (std::uint32_t m = 9; m <= 16; ++m) {
    CAPTURE(m);
    // Fewer tiles than two per SM, up to 64 units per SM (item 189's fit and the set
    // dram8a): one CTA per SM here, two with 3 stages on an H200 or an unknown device.
    for (const auto& layer :
         {std::array<std::uint32_t, 2>{28672, 4096}, {24576, 4096}, {28672, 3584},
          {20480, 4096}, {30720, 4096}, {24576, 5120}, {18432, 7168}, {19200, 3584}}) {
      const std::uint32_t n = layer[0], k = layer[1];
      CAPTURE(n);
      const M16Plan p = plan_m16_gemm(m, n, k, h100);
      CHECK(p.entry == kStreamK);
      CHECK(p.ctas == 132u);
      CHECK(p.stages == 0u);
      CHECK(plan_m16_gemm(m, n, k, 132).ctas == 264u);
      CHECK(same(plan_m16_gemm(m, n, k, h200), plan_m16_gemm(m, n, k, 132)));
      // With PDL as before.
      CHECK(same(plan_m16_gemm(m, n, k, h100, pdl), plan_m16_gemm(m, n, k, 132, pdl)));
    }
    // Two tiles per SM or more, or more than 64 units per SM: as before.
    for (const auto& layer : {std::array<std::uint32_t, 2>{51200, 5120}, {36864, 7168},
                              {34816, 5120}, {24576, 7168}, {36864, 4096}}) {
      const std::uint32_t n = layer[0], k = layer[1];
      CAPTURE(n);
      CHECK(same(plan_m16_gemm(m, n, k, h100), plan_m16_gemm(m, n, k, 132)));
      CHECK(same(plan_m16_gemm(m, n, k, h100, pdl), plan_m16_gemm(m, n, k, 132, pdl)));
    }
  }
}

TEST_CASE("plan_m16_gemm on narrow DRAM bandwidth: the 16-row deep form for the 32-row one") {
  const M16PlanDevice h100{132, kH100Gbps};
  // 3361-4224 rows from K = 12288 above 8 tokens, under 64 MiB: the 32-row form on 16
  // warps (one CTA per SM) elsewhere; here without PDL the 16-row form on 8 warps, every
  // CTA at once.
  for (const auto& layer : {std::array<std::uint32_t, 2>{4096, 14336}, {4096, 12288},
                            {3584, 14336}, {4224, 12288}, {3456, 13312},
                            {3840, 12800}, {3968, 16384}}) {
    const std::uint32_t n = layer[0], k = layer[1];
    CAPTURE(n);
    CAPTURE(k);
    for (std::uint32_t m = 9; m <= 16; ++m) {
      CAPTURE(m);
      const M16Plan p = plan_m16_gemm(m, n, k, h100);
      CHECK(p.entry == kDeep);
      CHECK(p.warps == 8u);
      CHECK(p.warp_blocks * p.warps * 128 >= k);
      CHECK(m16_plan_grid(p, n, k).ctas <= 264u);
      CHECK(same(plan_m16_gemm_one_chunk_deep(m, n, k, h100), p));
      const M16Plan elsewhere = plan_m16_gemm(m, n, k, 132);
      CHECK(elsewhere.entry == "w8a16_gemm_m16_skinny_deep32");
      CHECK(elsewhere.warps == 16u);
      CHECK(same(plan_m16_gemm(m, n, k, M16PlanDevice{132, kH200Gbps}), elsewhere));
      // With PDL, and up to 8 tokens, as before.
      CHECK(same(plan_m16_gemm(m, n, k, h100, M16LaunchOptions{true}),
                 plan_m16_gemm(m, n, k, 132, M16LaunchOptions{true})));
    }
    CHECK(same(plan_m16_gemm(8, n, k, h100), plan_m16_gemm(8, n, k, 132)));
  }
  // From 64 MiB the 32-row form on 16 warps stays (3584 x 18944, 4096 x 28672), as does
  // the 32-row form on 8 warps (8192 x 8192, DeepSeek-V3 o).
  CHECK(same(plan_m16_gemm(16, 3584, 18944, h100), plan_m16_gemm(16, 3584, 18944, 132)));
  CHECK(same(plan_m16_gemm(12, 4096, 28672, h100), plan_m16_gemm(12, 4096, 28672, 132)));
  CHECK(plan_m16_gemm(12, 4096, 28672, h100).entry == "w8a16_gemm_m16_skinny_deep32");
  CHECK(same(plan_m16_gemm(16, 8192, 8192, h100), plan_m16_gemm(16, 8192, 8192, 132)));
  CHECK(plan_m16_gemm(16, 7168, 16384, h100).entry == "w8a16_gemm_m16_skinny_deep32");
}

TEST_CASE("plan_m16_gemm on narrow DRAM bandwidth: stream-K where the deep waves are not full") {
  // 17408-19456 x 7168, 17920 x 8192 and 26624 x 4096: the deep entry's CTAs of 8 warps
  // fill 2.06-3.15 waves of 528 slots, under 80 % on average, and stream-K stays (item 188:
  // the 8-warp form took 1.02-1.07x its time on four of them).
  const M16PlanDevice h100{132, kH100Gbps};
  for (const auto& layer : {std::array<std::uint32_t, 2>{17408, 7168}, {18432, 7168},
                            {19456, 7168}, {17920, 8192}, {26624, 4096}}) {
    const std::uint32_t n = layer[0], k = layer[1];
    CAPTURE(n);
    for (std::uint32_t m = 1; m <= 8; ++m) {
      CAPTURE(m);
      CHECK(same(plan_m16_gemm(m, n, k, h100), plan_m16_gemm(m, n, k, 132)));
      CHECK(plan_m16_gemm(m, n, k, h100).entry == kStreamK);
    }
  }
}

TEST_CASE("plan_m16_gemm on narrow DRAM bandwidth: the rule's edges") {
  const M16PlanDevice h100{132, kH100Gbps};
  // The bound: under 31 GB/s per SM (4092 GB/s on 132 SMs), and per SM on other counts.
  CHECK(plan_m16_gemm(1, 28672, 4096, M16PlanDevice{132, 4091}).entry == kDeep);
  CHECK(plan_m16_gemm(1, 28672, 4096, M16PlanDevice{132, 4092}).entry == kStreamK);
  CHECK(plan_m16_gemm(1, 28672, 4096, M16PlanDevice{114, 2039}).entry == kDeep);
  // From 64 MiB: 16384 x 4096 is 64 MiB (the existing rule already runs it on the deep
  // entry's 4 warps, whatever the bandwidth); 16256 rows just under stay as before.
  CHECK(same(plan_m16_gemm(1, 16256, 4096, h100), plan_m16_gemm(1, 16256, 4096, 132)));
  // K of 4096 and more: 65536 x 1024 (64 MiB) and 32768 x 2048 stay as before.
  CHECK(same(plan_m16_gemm(1, 65536, 1024, h100), plan_m16_gemm(1, 65536, 1024, 132)));
  CHECK(same(plan_m16_gemm(1, 32768, 2048, h100), plan_m16_gemm(1, 32768, 2048, 132)));
  // An SM count alone is a device of unknown bandwidth.
  const M16PlanDevice sms_only = 132u;
  CHECK(sms_only.sm_count == 132u);
  CHECK(sms_only.dram_gbps == 0u);
}

TEST_CASE("plan_m16_gemm on narrow DRAM bandwidth: one-chunk plan and workspace agree") {
  // The plan without chunks (the C ABI's deep function) and the automatic call's workspace
  // follow the same device.
  const M16PlanDevice h100{132, kH100Gbps};
  const M16Plan one_chunk = plan_m16_gemm_one_chunk_deep(1, 28672, 4096, h100);
  CHECK(one_chunk.entry == kDeep);
  CHECK(one_chunk.warps == 8u);
  CHECK(plan_m16_gemm_one_chunk_deep(1, 28672, 4096, 132).entry == kStreamK);
  CHECK(w8a16_gemm_m16_auto_workspace_bytes(1, 28672, 4096, h100) == 0);
  CHECK(w8a16_gemm_m16_auto_workspace_bytes(1, 28672, 4096, 132) > 0);
}
