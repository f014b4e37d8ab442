// plan_m16_gemm picks the entry, split and grid for a shape, device and launch options
// from thresholds measured on an H200 (docs/performance.md); these cases pin each rule to
// the layers it was measured on and to the edges between rules.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "metrale/m16_plan.hpp"
#include "metrale/w8a16_gemm_m16.hpp"
#include "metrale/w8a16_gemm_m16_skinny.hpp"
#include "metrale/w8a16_gemm_m16_streamk.hpp"

using namespace metrale;

TEST_CASE("plan_m16_gemm: stream-K, streaming, 64-wide or split tiles where each fills the SMs") {
  const auto plan = [](std::uint32_t n, std::uint32_t k) { return plan_m16_gemm(1, n, k, 132); };
  // 64 MiB and more: stream-K, up to 8 tokens on one CTA per SM where the layer has at
  // most 64 units per SM and fewer tiles than two per SM (Llama-3-8B gate_up, Qwen3-32B
  // down, DeepSeek-V3 o and down), above 8 tokens where it has at most one tile per SM
  // (Qwen3-32B down), else on two with 3 stages; above 8 tokens DeepSeek-V3 o and down on
  // the deep kernel's 32-row form (8 warps).
  for (const auto& shape : {std::pair{28672u, 4096u}, {51200u, 5120u}, {36864u, 7168u},
                           {5120u, 25600u}, {7168u, 16384u}, {7168u, 18432u}}) {
    const auto n = shape.first;
    const auto k = shape.second;
    for (const std::uint32_t m : {1u, 8u, 9u, 16u}) {
      CAPTURE(n);
      CAPTURE(m);
      const M16Plan p = plan_m16_gemm(m, n, k, 132);
      if (n == 7168 && m > 8) {
        CHECK(p.entry == "w8a16_gemm_m16_skinny_deep32");
        CHECK(p.warps == 8);
        continue;
      }
      CHECK(p.entry == "w8a16_gemm_m16_streamk");
      CHECK(p.split == 1);
      const bool one_per_sm = m <= 8 ? n != 51200 && n != 36864 : n == 5120;
      CHECK(p.ctas == (one_per_sm ? 132u : 264u));
      CHECK(p.stages == (one_per_sm ? 0u : 3u));
    }
  }
  // The bounds: 64 units per SM (8448 on 132 SMs: 66 tiles of 128 blocks, not 67), and
  // fewer tiles than two per SM (263 tiles of 32 blocks, not 264).
  CHECK(plan_m16_gemm(1, 66 * 128, 16384, 132).ctas == 132u);
  CHECK(plan_m16_gemm(1, 67 * 128, 16384, 132).ctas == 264u);
  CHECK(plan_m16_gemm(1, 263 * 128, 4096, 132).ctas == 132u);
  CHECK(plan_m16_gemm(1, 264 * 128, 4096, 132).ctas == 264u);
  // Above 8 tokens at most one tile per SM (132 tiles of 32 blocks, not 133).
  CHECK(plan_m16_gemm(9, 132 * 128, 4096, 132).ctas == 132u);
  CHECK(plan_m16_gemm(16, 132 * 128, 4096, 132).ctas == 132u);
  CHECK(plan_m16_gemm(9, 133 * 128, 4096, 132).ctas == 264u);
  // The deep entry from 64 MiB only with K up to 12288 (8192 x 8192: 512 CTAs of 8 warps).
  CHECK(plan_m16_gemm(1, 8192, 8192, 132).entry == "w8a16_gemm_m16_skinny_deep");
  CHECK(plan_m16_gemm(1, 8192, 14336, 132).entry == "w8a16_gemm_m16_streamk");
  CHECK(streamk_plan_stages(264, 132) == 3u);
  CHECK(streamk_plan_stages(396, 132) == 3u);
  CHECK(streamk_plan_stages(263, 132) == 0u);
  CHECK(streamk_plan_stages(132, 132) == 0u);
  CHECK(streamk_plan_stages(264, 0) == 0u);
  CHECK(plan_m16_gemm(1, 51200, 5120, 114).ctas == 228);
  // Where the deep skinny entry declines (K under 1536 but for 1024, item 112; with PDL,
  // CTAs that do not fill two thirds of the slots, are not spread over the SMs or do not
  // fit at once): one CTA per SM from 32 MiB at 2 tokens and more (29184 x 1152) and from
  // 20 MiB at 5 (22528 x 1152); else the tiled entries below. Qwen3-32B qkv with PDL up
  // to 8 tokens: its 640 deep CTAs of 4 warps fill 61 % of the slots, spread over the SMs
  // five to one.
  const M16LaunchOptions pdl{true};
  for (const std::uint32_t m : {1u, 5u, 8u}) {
    const M16Plan p = plan_m16_gemm(m, 10240, 5120, 132, pdl);
    CHECK(p.entry == "w8a16_gemm_m16_skinny_deep");
    CHECK(p.warps == 4u);
    CHECK(p.max_ctas_per_sm == 5u);
  }
  for (const std::uint32_t m : {5u, 8u, 9u, 16u}) {
    CAPTURE(m);
    for (const M16Plan& p : {plan_m16_gemm(m, 29184, 1152, 132),
                             plan_m16_gemm(m, 22528, 1152, 132)}) {
      CHECK(p.entry == "w8a16_gemm_m16_streamk");
      CHECK(p.ctas == 132u);
      CHECK(p.stages == 0u);
    }
    // q_b with PDL: up to 8 tokens, where only its deep CTAs of 2 warps would fit at once,
    // stream-K on two CTAs per SM with 3 stages (item 110); above, the three-per-SM form on
    // 2 warps, 97 % of its 1584 slots, over the 90 % it needs there.
    const M16Plan q_b = plan_m16_gemm(m, 24576, 1536, 132, pdl);
    if (m <= 8) {
      CHECK(q_b.entry == "w8a16_gemm_m16_streamk");
      CHECK(q_b.ctas == 264u);
      CHECK(q_b.stages == 3u);
    } else {
      CHECK(q_b.entry == "w8a16_gemm_m16_skinny_deep3");
      CHECK(q_b.warps == 2u);
      CHECK(q_b.warp_blocks == 6u);
      CHECK(q_b.ctas == 0u);
      CHECK(q_b.max_ctas_per_sm == 0u);
    }
  }
  CHECK(plan_m16_gemm(2, 29184, 1152, 132).entry == "w8a16_gemm_m16_streamk");
  // Above 8 tokens with PDL Llama-3-8B qkv takes the deep kernel's three-per-SM form.
  CHECK(plan_m16_gemm(9, 6144, 4096, 132, pdl).entry == "w8a16_gemm_m16_skinny_deep3");
  // 52 MiB at m = 1 with K = 1024 (1664 seed tiles), past the deep entry's 48: the seed's
  // entry.
  CHECK(plan(53248, 1024).entry == "w8a16_gemm_m16");
  CHECK(plan(53248, 1024).ctas == 0);
  // Under one full chunk of K the skinny entry is not picked: 18 tiles with too few K
  // blocks to share, no split.
  CHECK(plan(576, 256).entry == "w8a16_gemm_m16");
  CHECK(plan(576, 256).split == 1);
  // Above 8 tokens from 16 to 20 MiB, the 64-wide tile where its tiles cover the SMs.
  CHECK(plan_m16_gemm(9, 17408, 1152, 132).entry == "w8a16_gemm_m16_n64");
  // The streaming entry where a split gives 1.5 to 2 of its 128-row CTAs per SM with 8 K
  // blocks each: 208 tiles unsplit at K = 1152, with or without PDL; 96 tiles split 2 are
  // too few. At K = 2048 the deep entry takes 198 tiles' rows instead (1584 CTAs of 2
  // warps fill 75 % of 2112 slots; with PDL CTAs of 8 warps with 2 blocks each, item 105).
  for (const M16LaunchOptions launch : {M16LaunchOptions{}, pdl}) {
    CHECK(plan_m16_gemm(1, 26624, 1152, 132, launch).entry == "w8a16_gemm_m16_stream");
    CHECK(plan_m16_gemm(1, 26624, 1152, 132, launch).split == 1);
  }
  CHECK(plan_m16_gemm(1, 25344, 2048, 132, pdl).entry == "w8a16_gemm_m16_skinny_deep");
  CHECK(plan_m16_gemm(1, 25344, 2048, 132).entry == "w8a16_gemm_m16_skinny_deep");
  CHECK(plan_m16_gemm(1, 25344, 2048, 132).warps == 2u);
  CHECK(plan_m16_gemm(1, 25344, 2048, 132, pdl).warps == 8u);
  CHECK(plan_m16_gemm(1, 25344, 2048, 132, pdl).warp_blocks == 2u);
  CHECK(plan_m16_gemm(1, 12288, 2048, 132, pdl).entry != "w8a16_gemm_m16_stream");
}

TEST_CASE("plan_m16_gemm with PDL: wide, shallow layers on deep CTAs of 2 or 3 blocks per warp") {
  // Up to 8 tokens, where the deep entry's CTAs fit at once only on 2 warps (item 105):
  // K = 1536 on 4 warps of 3 blocks, K = 2048 on 8 of 2, whatever the waves (2048 CTAs of
  // 4 warps are 1.9 waves of 1056 slots); 20480 rows too, whose 2-warp CTAs fill too few
  // slots for the deep entry. At K = 1536 up to 36 MiB (24576 rows) stream-K on two CTAs
  // per SM instead (item 110). Other K keep their plan, and so does every plan without PDL.
  const M16LaunchOptions pdl{true};
  for (const std::uint32_t m : {1u, 4u, 8u}) {
    CAPTURE(m);
    for (const std::uint32_t n : {20480u, 22528u, 24576u, 24704u, 32768u}) {
      CAPTURE(n);
      const M16Plan k1536 = plan_m16_gemm(m, n, 1536, 132, pdl);
      if (n <= 24576) {
        CHECK(k1536.entry == "w8a16_gemm_m16_streamk");
        CHECK(k1536.ctas == 264u);
        CHECK(k1536.stages == 3u);
        // 64 MiB and more at K = 2048 (above 24576 rows) is another case.
        const M16Plan k2048 = plan_m16_gemm(m, n, 2048, 132, pdl);
        CHECK(k2048.entry == "w8a16_gemm_m16_skinny_deep");
        CHECK(k2048.warps == 8u);
        CHECK(k2048.warp_blocks == 2u);
      } else {
        CHECK(k1536.entry == "w8a16_gemm_m16_skinny_deep");
        CHECK(k1536.warps == 4u);
        CHECK(k1536.warp_blocks == 3u);
        CHECK(k1536.max_ctas_per_sm == 0u);
      }
      const M16Plan plain = plan_m16_gemm(m, n, 1536, 132);
      CHECK((plain.entry != "w8a16_gemm_m16_skinny_deep" || plain.warps == 2u));
    }
    // 16384 rows fit at once on 4 warps: the form they fit on, with or without PDL.
    CHECK(plan_m16_gemm(m, 16384, 1536, 132, pdl).warps == 4u);
    CHECK(plan_m16_gemm(m, 16384, 1536, 132).warps == 4u);
    // K = 2560 (20 blocks): neither 4 nor 8 warps get 2 or 3 blocks each.
    CHECK(plan_m16_gemm(m, 24576, 2560, 132, pdl).warps == 2u);
  }
  // Above 8 tokens the rule does not apply: q_b on the three-per-SM form's 2 warps.
  CHECK(plan_m16_gemm(9, 24576, 1536, 132, pdl).warps == 2u);
}

TEST_CASE("plan_m16_gemm: the deep entry at K = 1024") {
  // Item 112: on 16-32 MiB up to 8 tokens, the deep entry's form without PDL (4 warps
  // where 1024 row groups fit at once on 4, else 2), with PDL 4 warps of 2 blocks each.
  // Not at K between 1024 and 1536.
  const M16LaunchOptions pdl{true};
  for (const std::uint32_t m : {1u, 4u, 8u}) {
    CAPTURE(m);
    for (const std::uint32_t n : {16384u, 20480u, 24576u, 28672u, 32768u}) {
      CAPTURE(n);
      const M16Plan plain = plan_m16_gemm(m, n, 1024, 132);
      CHECK(plain.entry == "w8a16_gemm_m16_skinny_deep");
      CHECK(plain.warps == (n == 16384 ? 4u : 2u));
      CHECK(plain.warp_blocks == 8u / plain.warps);
      const M16Plan with_pdl = plan_m16_gemm(m, n, 1024, 132, pdl);
      CHECK(with_pdl.entry == "w8a16_gemm_m16_skinny_deep");
      CHECK(with_pdl.warps == 4u);
      CHECK(with_pdl.warp_blocks == 2u);
    }
    CHECK(plan_m16_gemm(m, 20480, 1152, 132).entry != "w8a16_gemm_m16_skinny_deep");
  }
  // Item 113: on 32-48 MiB (2560-3072 row groups on 40960-49152 rows, more than fit at
  // once) the form's fallback, 4 warps of 2 blocks each, up to 8 tokens without PDL and up
  // to 4 with it; not above (stream-K on one CTA per SM), nor past 48 MiB.
  for (std::uint32_t m = 1; m <= 16; ++m) {
    CAPTURE(m);
    for (const std::uint32_t n : {36864u, 40960u, 49152u}) {
      CAPTURE(n);
      for (const M16LaunchOptions launch : {M16LaunchOptions{}, pdl}) {
        const M16Plan p = plan_m16_gemm(m, n, 1024, 132, launch);
        if (m <= (launch.programmatic_dependent ? 6u : 8u)) {
          CHECK(p.entry == "w8a16_gemm_m16_skinny_deep");
          CHECK(p.warps == 4u);
          CHECK(p.warp_blocks == 2u);
        } else {
          CHECK(p.entry == "w8a16_gemm_m16_streamk");
          CHECK(p.ctas == 132u);
        }
      }
    }
    CHECK(plan_m16_gemm(m, 53248, 1024, 132).entry != "w8a16_gemm_m16_skinny_deep");
  }
  // Item 156, above 8 tokens without PDL: from 20 MiB CTAs of 2 warps need 90 % of the
  // slots, else stream-K on one CTA per SM (14336 x 4096: 896 CTAs in 1584 slots); 20480
  // rows (1280 in 1320) keep them, and under 20 MiB the rule of item 113 below holds.
  for (const std::uint32_t m : {9u, 16u}) {
    CAPTURE(m);
    for (const auto& shape : {std::pair{14336u, 4096u}, {14336u, 1536u}, {18432u, 3072u}}) {
      const auto n = shape.first;
      const auto k = shape.second;
      CAPTURE(n);
      const M16Plan p = plan_m16_gemm(m, n, k, 132);
      CHECK(p.entry == "w8a16_gemm_m16_streamk");
      CHECK(p.ctas == 132u);
    }
    CHECK(plan_m16_gemm(m, 20480, 2048, 132).entry == "w8a16_gemm_m16_skinny_deep");
    CHECK(plan_m16_gemm(m, 20480, 2048, 132).warps == 2u);
    CHECK(plan_m16_gemm(m, 18432, 1024, 132).warps == 2u);
  }
  CHECK(plan_m16_gemm(8, 14336, 4096, 132).entry == "w8a16_gemm_m16_skinny_deep");
  // Item 113, above 8 tokens: where the form's CTAs all fit, 16384 rows on 2 warps of 4
  // blocks without PDL (1024 CTAs in 1320 slots) and 24576 on the three-per-SM form's 2
  // warps with and without PDL (1536 in 1584); with PDL 16384 rows run on stream-K on one
  // CTA per SM (the 2-warp CTAs fill under 90 % of the slots). 28672 and 32768 rows (1792
  // and 2048 CTAs) do not fit: stream-K on one CTA per SM.
  for (const std::uint32_t m : {9u, 12u, 16u}) {
    CAPTURE(m);
    const M16Plan narrow = plan_m16_gemm(m, 16384, 1024, 132);
    CHECK(narrow.entry == "w8a16_gemm_m16_skinny_deep");
    CHECK(narrow.warps == 2u);
    CHECK(narrow.warp_blocks == 4u);
    const M16Plan narrow_pdl = plan_m16_gemm(m, 16384, 1024, 132, pdl);
    CHECK(narrow_pdl.entry == "w8a16_gemm_m16_streamk");
    CHECK(narrow_pdl.ctas == 132u);
    for (const M16LaunchOptions launch : {M16LaunchOptions{}, pdl}) {
      const M16Plan wide = plan_m16_gemm(m, 24576, 1024, 132, launch);
      CHECK(wide.entry == "w8a16_gemm_m16_skinny_deep3");
      CHECK(wide.warps == 2u);
      CHECK(wide.warp_blocks == 4u);
      for (const std::uint32_t n : {28672u, 32768u}) {
        const M16Plan p = plan_m16_gemm(m, n, 1024, 132, launch);
        CHECK(p.entry == "w8a16_gemm_m16_streamk");
        CHECK(p.ctas == 132u);
      }
    }
  }
}

TEST_CASE("plan_m16_gemm: the deep entry on 8-16 MiB with K under 4096") {
  // Item 117: from 8 MiB under 16 with K of 1536-3584, and at K = 1024 above 8 tokens, the
  // rules of 16-64 MiB: 7168 x 2048 (448 CTAs) on 8 warps up to 8 tokens and on 4 above,
  // spread with PDL; 4608 x 3584 (288) on 8 warps, spread with PDL, and above 8 tokens on
  // the three-per-SM form's 8; 8192 x 1024 on 4 warps above 8 tokens, the skinny entry up
  // to 8. Not under 8 MiB (2048 x 2048, 4096 x 1536).
  const M16LaunchOptions pdl{true};
  for (std::uint32_t m = 1; m <= 16; ++m) {
    CAPTURE(m);
    for (const M16LaunchOptions launch : {M16LaunchOptions{}, pdl}) {
      const bool with_pdl = launch.programmatic_dependent;
      CAPTURE(with_pdl);
      // Above 8 tokens without PDL the 32-row form on 8 warps of 2 blocks (item 157).
      const M16Plan k2048 = plan_m16_gemm(m, 7168, 2048, 132, launch);
      const bool k2048_deep32 = m > 8 && !with_pdl;
      CHECK(k2048.entry ==
            (k2048_deep32 ? "w8a16_gemm_m16_skinny_deep32" : "w8a16_gemm_m16_skinny_deep"));
      CHECK(k2048.warps == (m <= 8 || k2048_deep32 ? 8u : 4u));
      CHECK(k2048.warp_blocks == 16u / k2048.warps);
      CHECK(k2048.max_ctas_per_sm == (with_pdl && m > 8 ? 4u : 0u));
      const M16Plan k3584 = plan_m16_gemm(m, 4608, 3584, 132, launch);
      CHECK(k3584.entry == (m <= 8 ? "w8a16_gemm_m16_skinny_deep" : "w8a16_gemm_m16_skinny_deep3"));
      CHECK(k3584.warps == 8u);
      CHECK(k3584.max_ctas_per_sm == (with_pdl && m <= 8 ? 3u : 0u));
      const M16Plan k1024 = plan_m16_gemm(m, 8192, 1024, 132, launch);
      CHECK(k1024.entry == (m <= 8 ? "w8a16_gemm_m16_skinny" : "w8a16_gemm_m16_skinny_deep"));
      // Item 119: at K = 1024 up to 8 tokens where the form's CTAs have 4 warps (from 9216
      // rows), 2 blocks each; with PDL spread at a share of 5 (9216 rows) and 6 (11264), not
      // at 7 (13312).
      if (m <= 8) {
        for (const std::uint32_t n : {9216u, 11264u, 13312u, 15360u}) {
          CAPTURE(n);
          const M16Plan p = plan_m16_gemm(m, n, 1024, 132, launch);
          CHECK(p.entry == "w8a16_gemm_m16_skinny_deep");
          CHECK(p.warps == 4u);
          CHECK(p.warp_blocks == 2u);
          const std::uint32_t share = n == 9216 ? 5u : n == 11264 ? 6u : 0u;
          CHECK(p.max_ctas_per_sm == (with_pdl ? share : 0u));
        }
      }
      for (const auto& [n, k] : {std::pair{2048u, 2048u}, {4096u, 1536u}}) {
        CHECK(plan_m16_gemm(m, n, k, 132, launch).entry == "w8a16_gemm_m16_skinny");
      }
    }
  }
}

TEST_CASE("plan_m16_gemm: K of 512-896") {
  // Item 118: the rules of K = 1024. The deep entry's form where its CTAs all fit (32768 x
  // 512 on 2 warps, 16384 x 512 on 4, 24576 x 768 above 8 tokens on the three-per-SM
  // form's 2), its 4-warp fallback in waves up to 8 tokens where they do not (65536 x 512;
  // with PDL up to 6), and stream-K on one CTA per SM where the seed's tiles would run.
  // Not under 512 (49152 x 384 keeps the seed's entry). Item 119: the fallback only where
  // its 4 warps get the same blocks (K = 512), else stream-K on one CTA per SM (36864 x
  // 640, 40960 x 768, 45056 x 896); with PDL up to 8 tokens on two with 3 stages (item
  // 121), above on one. Item 124: where the deep form has 4 warps, at K = 512 the skinny
  // entry on 4 instead up to 8 tokens (16384 and 65536 x 512), and above 8 tokens without
  // PDL where no deep form fits (32768 x 512, stream-K with PDL).
  const M16LaunchOptions pdl{true};
  for (const M16LaunchOptions launch : {M16LaunchOptions{}, pdl}) {
    const bool with_pdl = launch.programmatic_dependent;
    CAPTURE(with_pdl);
    for (const std::uint32_t m : {1u, 4u, 8u}) {
      CAPTURE(m);
      const M16Plan wide = plan_m16_gemm(m, 32768, 512, 132, launch);
      CHECK(wide.entry == "w8a16_gemm_m16_skinny_deep");
      CHECK(wide.warps == 2u);
      CHECK(wide.warp_blocks == 2u);
      for (const std::uint32_t n : {16384u, 65536u}) {
        const M16Plan four = plan_m16_gemm(m, n, 512, 132, launch);
        CHECK(four.entry == "w8a16_gemm_m16_skinny");
        CHECK(four.warps == 4u);
        CHECK(four.max_ctas_per_sm == 0u);
      }
      CHECK(plan_m16_gemm(m, 49152, 384, 132, launch).entry != "w8a16_gemm_m16_skinny_deep");
      for (const auto& shape : {std::pair{36864u, 640u}, {40960u, 768u}, {45056u, 896u}}) {
        const auto n = shape.first;
        const auto k = shape.second;
        CAPTURE(k);
        const M16Plan p = plan_m16_gemm(m, n, k, 132, launch);
        CHECK(p.entry == "w8a16_gemm_m16_streamk");
        CHECK(p.ctas == (with_pdl ? 264u : 132u));
        CHECK(p.stages == (with_pdl ? 3u : 0u));
        CHECK(plan_m16_gemm(16, n, k, 132, launch).ctas == 132u);
      }
    }
    const M16Plan k768 = plan_m16_gemm(16, 24576, 768, 132, launch);
    CHECK(k768.entry == "w8a16_gemm_m16_skinny_deep3");
    CHECK(k768.warps == 2u);
    CHECK(k768.warp_blocks == 3u);
    const M16Plan tiles = plan_m16_gemm(16, 32768, 512, 132, launch);
    CHECK(tiles.entry == (with_pdl ? "w8a16_gemm_m16_streamk" : "w8a16_gemm_m16_skinny"));
    CHECK(tiles.ctas == (with_pdl ? 132u : 0u));
    CHECK(tiles.warps == (with_pdl ? 0u : 4u));
    const M16Plan narrow16 = plan_m16_gemm(16, 16384, 512, 132, launch);
    CHECK(narrow16.entry == (with_pdl ? "w8a16_gemm_m16_streamk" : "w8a16_gemm_m16_skinny_deep"));
  }
  CHECK(plan_m16_gemm(1, 49152, 384, 132).entry == "w8a16_gemm_m16");
  // Item 124: at K of 640-896 where the deep form's 4-warp CTAs fit, the skinny entry on 8
  // warps up to 8 tokens without PDL; with PDL, above 8 tokens and on a 2-warp form at K =
  // 768 (20480 x 768) the deep entry. Item 126: at K = 896 on a 2-warp form the skinny
  // entry too, with PDL only where the form fills under three quarters of the slots
  // (22528 rows, 1408 CTAs of 2112; not 31744, 1984). Item 127: with PDL at K = 640 on a
  // 4-warp form stream-K on one CTA per SM (16384 x 640).
  for (const auto& shape : {std::pair{12288u, 896u}, {16384u, 640u}, {12288u, 768u}}) {
    const auto n = shape.first;
    const auto k = shape.second;
    CAPTURE(n);
    for (const std::uint32_t m : {1u, 4u, 8u}) {
      const M16Plan p = plan_m16_gemm(m, n, k, 132);
      CHECK(p.entry == "w8a16_gemm_m16_skinny");
      CHECK(p.warps == 8u);
      const M16Plan with_pdl = plan_m16_gemm(m, n, k, 132, pdl);
      CHECK(with_pdl.entry ==
            (k == 640 ? "w8a16_gemm_m16_streamk" : "w8a16_gemm_m16_skinny_deep"));
      CHECK(with_pdl.ctas == (k == 640 ? 132u : 0u));
      CHECK(plan_m16_gemm(m, 20480, 768, 132).entry == "w8a16_gemm_m16_skinny_deep");
      for (const std::uint32_t rows : {22528u, 31744u}) {
        CHECK(plan_m16_gemm(m, rows, 896, 132).entry == "w8a16_gemm_m16_skinny");
        CHECK(plan_m16_gemm(m, rows, 896, 132).warps == 8u);
      }
      CHECK(plan_m16_gemm(m, 22528, 896, 132, pdl).entry == "w8a16_gemm_m16_skinny");
      CHECK(plan_m16_gemm(m, 31744, 896, 132, pdl).entry == "w8a16_gemm_m16_skinny_deep");
    }
    CHECK(plan_m16_gemm(16, n, k, 132).entry != "w8a16_gemm_m16_skinny");
  }
}

TEST_CASE("plan_m16_gemm: the skinny entry on small layers") {
  const auto skinny = [](std::uint32_t m, std::uint32_t n, std::uint32_t k, bool pdl = false) {
    const M16Plan p = plan_m16_gemm(m, n, k, 132, M16LaunchOptions{pdl});
    if (p.entry != "w8a16_gemm_m16_skinny") return false;
    CHECK(p.warps == W8A16_GEMM_M16_SKINNY_WARPS);
    CHECK(p.split == 1);
    CHECK(p.ctas == 0);
    return true;
  };
  for (std::uint32_t m = 1; m <= 16; ++m) {
    CAPTURE(m);
    // Under 16 MiB (DeepSeek-V3 kv_a, q_a, 1024 x 2048, 1024 x 8192, 2048 x 2048, 1280 x
    // 7168), with or without PDL; q_a from 11 tokens, 12 with PDL, takes the deep entry
    // (below), and with PDL up to 8 tokens its form in chunks. (1024 x 8192 has too few row
    // groups for item 122's chunks without PDL.)
    for (const auto& [n, k] : {std::pair{576u, 7168u}, {1536u, 7168u}, {1024u, 2048u},
                               {1024u, 8192u}, {2048u, 2048u}, {1280u, 7168u}}) {
      // (q_a without PDL up to 8 tokens: the deep entry in 7-warp chunks, item 180.)
      if (n != 1536 || (m > 8 && m < 11)) CHECK(skinny(m, n, k));
      // With PDL up to 8 tokens the deep entry in chunks (item 160: 256-384 CTAs of 528).
      const bool chunked_with_pdl = m <= 8 && k >= 7168 && n >= 1024;
      if (!chunked_with_pdl && (n != 1536 || m < 12)) CHECK(skinny(m, n, k, true));
    }
    // The deep entry on 16 warps where its CTAs fill 69 % of the slots (q_a's 96 CTAs in
    // 132, 1472 x 6144's 92, not kv_a's 36, 1024 x 8192's 64 nor 1280 x 7168's 80) from 11
    // tokens with K of 5120 and more (item 169; from 9 at K of 5632-6144, item 171, below),
    // and with PDL where they fill 70 % from 12
    // tokens (at K of 4608-6144 from 9, item 170); two thirds (1408 x 8192's 88) from 14,
    // with PDL from 13.
    for (const bool pdl : {false, true}) {
      CAPTURE(pdl);
      const M16Plan q_a = plan_m16_gemm(m, 1536, 7168, 132, M16LaunchOptions{pdl});
      const M16Plan narrow_k = plan_m16_gemm(m, 1536, 4096, 132, M16LaunchOptions{pdl});
      const M16Plan two_thirds = plan_m16_gemm(m, 1408, 8192, 132, M16LaunchOptions{pdl});
      const M16Plan at_92 = plan_m16_gemm(m, 1472, 6144, 132, M16LaunchOptions{pdl});
      CHECK((at_92.entry == "w8a16_gemm_m16_skinny_deep" && at_92.warps == 16u &&
             at_92.warp_blocks == 3u) == (m >= 9));
      // Without PDL from 9 tokens where they fill more than two thirds at K of 5632-6144
      // (1440 x 5632's 90 CTAs, not 1408 x 5632's 88 before 14 tokens), and on CTAs of 8
      // warps at K of 5120-6144 (3136 x 5120's 196 of 264 and 2912 x 5120's 182, not 2816 x
      // 5120's 176 before 14) (items 171 and 172).
      const auto deep_on = [&](std::uint32_t n, std::uint32_t k, std::uint32_t warps) {
        const M16Plan p = plan_m16_gemm(m, n, k, 132, M16LaunchOptions{pdl});
        return p.entry == "w8a16_gemm_m16_skinny_deep" && p.warps == warps && p.split == 1;
      };
      CHECK(deep_on(1440, 5632, 16) == (m >= 9));
      CHECK(deep_on(1408, 5632, 16) == (m >= (pdl ? 9u : 14u)));
      CHECK(deep_on(3136, 5120, 8) == (m >= 9));
      CHECK(deep_on(2912, 5120, 8) == (m >= 9));
      if (!pdl) CHECK(deep_on(2816, 5120, 8) == (m >= 14));
      // With PDL from 9 tokens from two thirds at K of 4608-6144 (item 170): 1408 x 5120's 88
      // CTAs, not 1376 x 5120's 86, not at K = 4096 (1536 x 4096, above) nor 7168 (q_a).
      const M16Plan at_88 = plan_m16_gemm(m, 1408, 5120, 132, M16LaunchOptions{pdl});
      const M16Plan at_86 = plan_m16_gemm(m, 1376, 5120, 132, M16LaunchOptions{pdl});
      CHECK((at_88.entry == "w8a16_gemm_m16_skinny_deep" && at_88.warps == 16u) ==
            (m >= (pdl ? 9u : 14u)));
      CHECK_FALSE((at_86.entry == "w8a16_gemm_m16_skinny_deep" && at_86.warps == 16u));
      if (m >= (pdl ? 12u : 11u)) {
        CHECK(q_a.entry == "w8a16_gemm_m16_skinny_deep");
        CHECK(q_a.warps == 16u);
        CHECK(q_a.warp_blocks == 4u);  // 56 K blocks on 16 warps
        CHECK(narrow_k.entry == (pdl ? "w8a16_gemm_m16_skinny_deep" : "w8a16_gemm_m16_skinny"));
      } else if (pdl && m <= 8) {
        CHECK(q_a.entry == "w8a16_gemm_m16_skinny_deep");  // in chunks
        CHECK(q_a.warp_blocks == 2u);
        CHECK(narrow_k.entry == "w8a16_gemm_m16_skinny");  // 192 CTAs: 36 % of the slots
      } else if (m <= 8) {
        // Without PDL in 4 equal chunks of 7 warps of 2 blocks (item 180: 384 CTAs of 528).
        CHECK(q_a.entry == "w8a16_gemm_m16_skinny_deep");
        CHECK(q_a.warps == 7u);
        CHECK(q_a.warp_blocks == 2u);
        CHECK(narrow_k.entry == "w8a16_gemm_m16_skinny");
      } else {
        CHECK(q_a.entry == "w8a16_gemm_m16_skinny");
        CHECK(narrow_k.entry == "w8a16_gemm_m16_skinny");
      }
      // (Up to 8 tokens its form in chunks: with PDL 88 x 4 = 352 CTAs, two thirds of 528;
      // without, item 122's; above 8 without PDL item 165's 4 warps of 4 blocks.)
      const bool chunked = m <= 8 || !pdl;
      CHECK(two_thirds.entry == (m >= (pdl ? 13u : 14u) || chunked ? "w8a16_gemm_m16_skinny_deep"
                                                                    : "w8a16_gemm_m16_skinny"));
    }
    // Above 8 tokens the deep entry on 16 warps where its CTAs fill 80 % of the slots and K
    // is 4096 or more: 2048 rows (128 CTAs in 132 slots) and 1792 (112).
    for (const auto& [n, k] : {std::pair{2048u, 4096u}, {2048u, 7168u}, {1792u, 7168u}}) {
      for (const bool pdl : {false, true}) {
        const M16Plan p = plan_m16_gemm(m, n, k, 132, M16LaunchOptions{pdl});
        if (m <= 8 && pdl && k == 7168) {
          CHECK(p.entry == "w8a16_gemm_m16_skinny_deep");  // in chunks (below)
          CHECK(p.warp_blocks == 2u);
        } else if (m <= 8 && pdl) {
          CHECK(p.entry == "w8a16_gemm_m16_skinny_deep");  // one CTA per SM (item 160)
          CHECK(p.warps == 16u);
          CHECK(p.max_ctas_per_sm == 1u);
        } else if (m <= 8 && k == 7168) {
          // 14-warp chunks (item 181): 2048 rows 256 CTAs of 264, 1792 rows 224.
          const bool fourteen = p.entry == "w8a16_gemm_m16_skinny_deep" && p.warps == 14u &&
                                p.warp_blocks == 2u;
          CHECK(fourteen);
        } else if (m <= 8) {
          CHECK(skinny(m, n, k, pdl));
        } else {
          CHECK(p.entry == "w8a16_gemm_m16_skinny_deep");
          CHECK(p.warps == 16u);
          CHECK(p.warp_blocks == (k / 128 + 15) / 16);
        }
      }
    }
    // Not at K = 1024 from 16 MiB, the deep entry's (items 112 and 113), nor with K under
    // the deep entry's depths on more than 24 MiB or above 8 tokens (K = 1152).
    CHECK_FALSE(skinny(m, 16384, 1024));
    CHECK_FALSE(skinny(m, 16384, 1024, true));
    CHECK(skinny(m, 21760, 1152) == (m <= 8));
    CHECK_FALSE(skinny(m, 21760, 1152, true));
    // From 16 MiB with K >= 1536 the deep entry takes over (its own case); with PDL where it
    // declines (CTAs of 4 warps), not this entry either; but where the deep entry's CTAs
    // would fill under half the slots (2048 x 8192 up to 8 tokens), this one with PDL
    // (without, the deep entry in chunks, item 122).
    CHECK_FALSE(skinny(m, 2048, 8192));
    CHECK(skinny(m, 2048, 8192, true) == (m <= 8));
    for (const auto& [n, k] : {std::pair{4096u, 4096u}, {8192u, 2048u}, {6144u, 4096u}, {12288u, 2048u}, {4096u, 14336u}, {10240u, 5120u},
                              {24576u, 1536u}}) {
      CHECK_FALSE(skinny(m, n, k));
      CHECK_FALSE(skinny(m, n, k, true));
    }
    // Nor over 24 MiB with K under 1536, nor from 64 MiB.
    CHECK_FALSE(skinny(m, 26624, 1024));
    CHECK_FALSE(skinny(m, 4096, 16384));
    CHECK_FALSE(skinny(m, 28672, 4096));
    // Under one chunk of K (1024) only where the deep form has 4 warps (item 124), or 2 at
    // K = 896 (item 126).
    CHECK_FALSE(skinny(m, 20480, 768));
    CHECK_FALSE(skinny(m, 576, 256, true));
  }
}

TEST_CASE("plan_m16_gemm: the deep skinny entry on 16-64 MiB layers, one chunk of K") {
  // The CTAs an SM holds at 64 / 96 registers and the warps that fit a layer's CTAs on the
  // device at once: 16, else 8, else 4.
  CHECK(w8a16_gemm_m16_skinny_deep_ctas_per_sm(1, 16) == 2);
  CHECK(w8a16_gemm_m16_skinny_deep_ctas_per_sm(8, 8) == 4);
  CHECK(w8a16_gemm_m16_skinny_deep_ctas_per_sm(8, 4) == 8);
  CHECK(w8a16_gemm_m16_skinny_deep_ctas_per_sm(9, 16) == 1);
  CHECK(w8a16_gemm_m16_skinny_deep_ctas_per_sm(16, 8) == 2);
  CHECK(w8a16_gemm_m16_skinny_deep_ctas_per_sm(16, 4) == 5);
  CHECK(w8a16_gemm_m16_skinny_deep_ctas_per_sm(1, 0) == 0);
  // The three-per-SM form: 80 registers above 8 tokens, CTAs of at most 8 warps.
  CHECK(w8a16_gemm_m16_skinny_deep3_ctas_per_sm(16, 8) == 3);
  CHECK(w8a16_gemm_m16_skinny_deep3_ctas_per_sm(16, 4) == 6);
  CHECK(w8a16_gemm_m16_skinny_deep3_ctas_per_sm(8, 8) == 4);
  CHECK(w8a16_gemm_m16_skinny_deep3_ctas_per_sm(16, 16) == 0);
  const auto form = [](std::uint32_t m, std::uint32_t n, std::uint32_t sms) {
    const SkinnyDeepForm f = w8a16_gemm_m16_skinny_deep_form(m, n, sms);
    return fmt::format("{}/{} x{}", f.kernel, f.warps, f.ctas_per_sm);
  };
  CHECK(form(1, 4096, 132) == "w8a16_gemm_m16_skinny_deep/16 x2");   // 256 CTAs, 264 fit
  CHECK(form(9, 4096, 132) == "w8a16_gemm_m16_skinny_deep/8 x2");
  CHECK(form(1, 4096, 114) == "w8a16_gemm_m16_skinny_deep/8 x4");    // 228 fit
  CHECK(form(8, 6144, 132) == "w8a16_gemm_m16_skinny_deep/8 x4");    // 384 CTAs, 528 fit
  CHECK(form(9, 6144, 132) == "w8a16_gemm_m16_skinny_deep3/8 x3");   // 264 fit, or 396
  CHECK(form(16, 6144, 114) == "w8a16_gemm_m16_skinny_deep/4 x5");   // 342 fit, or 570
  CHECK(form(1, 10240, 132) == "w8a16_gemm_m16_skinny_deep/4 x8");   // 640 CTAs, 1056 fit
  CHECK(form(16, 10240, 132) == "w8a16_gemm_m16_skinny_deep/4 x5");  // 660 fit
  CHECK(form(16, 12288, 132) == "w8a16_gemm_m16_skinny_deep3/4 x6"); // 768 CTAs: 660, or 792
  CHECK(form(1, 24576, 132) == "w8a16_gemm_m16_skinny_deep/2 x16");  // 1536 CTAs, 2112 fit
  CHECK(form(16, 24576, 132) == "w8a16_gemm_m16_skinny_deep3/2 x12"); // 1320, or 1584
  CHECK(form(16, 16384, 132) == "w8a16_gemm_m16_skinny_deep/2 x10");  // 1024 CTAs, 1320 fit
  CHECK(form(1, 65536, 132) == "w8a16_gemm_m16_skinny_deep/4 x8");    // none fits at once
  // One chunk of K: ceil(K blocks / warps), at least 1.
  CHECK(w8a16_gemm_m16_skinny_deep_one_chunk_blocks(4096, 16) == 2);
  CHECK(w8a16_gemm_m16_skinny_deep_one_chunk_blocks(14336, 16) == 7);
  CHECK(w8a16_gemm_m16_skinny_deep_one_chunk_blocks(1536, 4) == 3);
  CHECK(w8a16_gemm_m16_skinny_deep_one_chunk_blocks(0, 4) == 1);

  struct Want {
    std::uint32_t n, k, warps_m8, warps_m16;
    // The PDL plan keeps the deep entry: its CTAs fit at once and fill two thirds of the
    // slots, above 8 tokens 90 % with CTAs of 2 warps (o, down: 256 of 264; qkv 384 of
    // 528, and above 8 tokens of the three-per-SM form's 396; Qwen3-32B qkv 640 of 660, not
    // of 1056, and up to 8 tokens spread over the SMs, item 94; q_b above 8 tokens 1536 of
    // the three-per-SM form's 1584, up to 8 stream-K, item 110).
    bool pdl_m8, pdl_m16;
    bool deep3_m16 = false;  // above 8 tokens the three-per-SM form
    bool deep32_m16 = false;  // above 8 tokens the 32-row form (warps_m16 its warps)
  };
  // Llama-3-8B o, qkv and down, Qwen3-32B qkv, DeepSeek-V3 q_b, and 16 MiB at K = 2048
  // with PDL (without, the 32-row form above 8 tokens: below).
  for (const Want& w :
       {Want{4096, 4096, 16, 8, true, true}, Want{6144, 4096, 8, 8, true, true, true},
        Want{4096, 14336, 16, 16, true, true, false, true}, Want{10240, 5120, 4, 4, true, true},
        Want{24576, 1536, 2, 2, false, true, true}}) {
    for (std::uint32_t m = 1; m <= 16; ++m) {
      CAPTURE(w.n);
      CAPTURE(m);
      const std::uint32_t warps = m <= 8 ? w.warps_m8 : w.warps_m16;
      const std::string_view kernel = m <= 8       ? "w8a16_gemm_m16_skinny_deep"
                                      : w.deep3_m16  ? "w8a16_gemm_m16_skinny_deep3"
                                      : w.deep32_m16 ? "w8a16_gemm_m16_skinny_deep32"
                                                     : "w8a16_gemm_m16_skinny_deep";
      for (const bool pdl : {false, true}) {
        const M16Plan p = plan_m16_gemm(m, w.n, w.k, 132, M16LaunchOptions{pdl});
        if (pdl && !(m <= 8 ? w.pdl_m8 : w.pdl_m16)) {
          CHECK_FALSE(p.entry.starts_with("w8a16_gemm_m16_skinny_deep"));
          continue;
        }
        CHECK(p.entry == kernel);
        CHECK(p.warps == warps);
        CHECK(p.warp_blocks == (w.k / 128 + warps - 1) / warps);
        CHECK(p.split == 1);
        CHECK(p.ctas == 0);
        // One chunk: no workspace.
        CHECK(w8a16_gemm_m16_skinny_workspace_bytes(w.n, w.k, p.warps, p.warp_blocks) == 0);
      }
    }
  }
  // 8192 x 2048: 512 CTAs of 8 warps up to 8 tokens; above, 256 CTAs of the 32-row form
  // on 8 warps of 2 blocks without PDL, with PDL 512 of 4 warps (item 157).
  for (std::uint32_t m = 1; m <= 16; ++m) {
    CAPTURE(m);
    for (const bool pdl : {false, true}) {
      CAPTURE(pdl);
      const M16Plan p = plan_m16_gemm(m, 8192, 2048, 132, M16LaunchOptions{pdl});
      const bool deep32 = m > 8 && !pdl;
      CHECK(p.entry == (deep32 ? "w8a16_gemm_m16_skinny_deep32" : "w8a16_gemm_m16_skinny_deep"));
      CHECK(p.warps == (m <= 8 || deep32 ? 8u : 4u));
      CHECK(p.warp_blocks == 16u / p.warps);
    }
  }
  // The three-per-SM form above 14 tokens only where it fills 90 % of its slots or K is
  // under 7168, else stream-K on one CTA per SM (item 158): 5120 x 8192 (320 CTAs in 396).
  for (const bool pdl : {false, true}) {
    CAPTURE(pdl);
    for (const std::uint32_t m : {14u, 15u, 16u}) {
      CAPTURE(m);
      const M16Plan p = plan_m16_gemm(m, 5120, 8192, 132, M16LaunchOptions{pdl});
      CHECK(p.entry == (m >= 15 ? "w8a16_gemm_m16_streamk" : "w8a16_gemm_m16_skinny_deep3"));
      CHECK(p.ctas == (m >= 15 ? 132u : 0u));
    }
    for (const auto& [n, k] : {std::pair{5120u, 6144u}, {6144u, 8192u}, {6144u, 4096u}}) {
      CHECK(plan_m16_gemm(16, n, k, 132, M16LaunchOptions{pdl}).entry ==
            "w8a16_gemm_m16_skinny_deep3");
    }
    CHECK(plan_m16_gemm(16, 5632, 7168, 132, M16LaunchOptions{pdl}).ctas == 132u);
  }
  // Not on one chunk where its CTAs fill under half of the device's slots: 2048 x 8192 up
  // to 8 tokens (128 CTAs of 16 warps, 264 slots; the skinny entry, or without PDL its
  // form in chunks, item 122); above, 128 of 132.
  for (std::uint32_t m = 1; m <= 16; ++m) {
    CAPTURE(m);
    const M16Plan p = plan_m16_gemm_one_chunk_deep(m, 2048, 8192, 132);
    CHECK((p.entry == "w8a16_gemm_m16_skinny_deep") == (m > 8));
    if (m <= 8) CHECK(p.entry == "w8a16_gemm_m16_skinny");
    const M16Plan chunked = plan_m16_gemm(m, 2048, 8192, 132);
    CHECK(chunked.entry == "w8a16_gemm_m16_skinny_deep");
    CHECK((w8a16_gemm_m16_skinny_chunks(8192, chunked.warps, chunked.warp_blocks) > 1) ==
          (m <= 8));
  }
  // Not under 16 MiB up to 10 tokens where the CTAs fill under 80 % of the slots, from 64
  // MiB, or with K under 1536.
  for (const std::uint32_t m : {1u, 8u, 10u}) {
    // (Up to 8 tokens q_a runs item 180's 7-warp chunks.)
    CHECK(plan_m16_gemm(m, 1536, 7168, 132).entry ==
          (m <= 8 ? "w8a16_gemm_m16_skinny_deep" : "w8a16_gemm_m16_skinny"));
    CHECK(plan_m16_gemm(m, 28672, 4096, 132).entry == "w8a16_gemm_m16_streamk");
    CHECK(plan_m16_gemm(m, 4096, 16384, 132).entry ==
          (m > 8 ? "w8a16_gemm_m16_skinny_deep32" : "w8a16_gemm_m16_skinny_deep"));
    CHECK(plan_m16_gemm(m, 14336, 1152, 132).entry == "w8a16_gemm_m16_skinny");
  }
}

TEST_CASE("plan_m16_gemm with PDL: split-K for the seed's entries, stream-K on its grid") {
  const M16LaunchOptions pdl{true};
  // Every shape of the default set, m 1..16: the PDL plan differs from the plain one only
  // where that one picks a tiled entry from 16 MiB at 4 to 8 tokens (stream-K on one CTA
  // per SM instead), an entry that takes no launch options, or stream-K's grid from 64 MiB
  // (one CTA per SM with PDL only on DeepSeek-V3 o up to 8 tokens: 54 units per SM, 56
  // tiles; without, also on Llama-3-8B gate_up and Qwen3-32B and DeepSeek-V3 down).
  for (const auto& shape : {std::pair{6144u, 4096u}, {4096u, 4096u}, {28672u, 4096u},
                           {4096u, 14336u}, {10240u, 5120u}, {51200u, 5120u},
                           {5120u, 25600u}, {1536u, 7168u}, {576u, 7168u}, {24576u, 1536u},
                           {7168u, 16384u}, {36864u, 7168u}, {7168u, 18432u}, {12288u, 2048u},
                           {7168u, 4096u}}) {
    const auto n = shape.first;
    const auto k = shape.second;
    for (std::uint32_t m = 1; m <= 16; ++m) {
      CAPTURE(n);
      CAPTURE(k);
      CAPTURE(m);
      const M16Plan plain = plan_m16_gemm(m, n, k, 132);
      const M16Plan p = plan_m16_gemm(m, n, k, 132, pdl);
      // The skinny entries' own PDL bounds are their cases; the layers the plain plan gives
      // them and the PDL plan does not are named below.
      if (plain.entry.starts_with("w8a16_gemm_m16_skinny")) continue;
      const bool tiled = plain.entry == "w8a16_gemm_m16" || plain.entry == "w8a16_gemm_m16_n64" ||
                         plain.entry == "w8a16_gemm_m16_splitk";
      if (tiled && std::uint64_t{n} * k >= (std::uint64_t{16} << 20) && m >= 4 && m <= 8) {
        CHECK(p.entry == "w8a16_gemm_m16_streamk");
        CHECK(p.ctas == 132u);
      } else if (plain.entry == "w8a16_gemm_m16_streamk" &&
                 std::uint64_t{n} * k >= (std::uint64_t{64} << 20)) {
        // With PDL every layer of the benchmark from 64 MiB has more tiles than one per
        // SM suits (DeepSeek-V3 o, 56 tiles, the nearest).
        CHECK(p.entry == plain.entry);
        CHECK(p.ctas == 264u);
        CHECK(p.stages == 3u);
      } else if (plain.entry == "w8a16_gemm_m16" || plain.entry == "w8a16_gemm_m16_n64") {
        CHECK(p.entry == "w8a16_gemm_m16_splitk");
        CHECK(p.split == 1);
        CHECK(p.ctas == 0);
      } else {
        CHECK(p.entry == plain.entry);
        CHECK(p.split == plain.split);
        CHECK(p.ctas == plain.ctas);
        CHECK(p.stages == plain.stages);
      }
    }
  }
  // Named cases: DeepSeek-V3 q_b at m = 1, DeepSeek-V3 o at m = 1, and the device's SM
  // count.
  CHECK(plan_m16_gemm(1, 24576, 1536, 132, pdl).split == 1);
  CHECK(plan_m16_gemm(1, 7168, 18432, 132, pdl).ctas == 264u);
  CHECK(plan_m16_gemm(1, 7168, 18432, 114, pdl).ctas == 228u);
  // One CTA per SM with PDL: at most 3 tiles per 8 SMs (49 tiles on 132 SMs, not 50), at
  // every m; above 8 tokens also up to one tile per SM where each SM gets at most 49 units
  // (50 tiles of 128 K blocks: 48.5; 51: 49.5; 132 tiles of 48: 48).
  CHECK(plan_m16_gemm(8, 49 * 128, 16384, 132, pdl).ctas == 132u);
  CHECK(plan_m16_gemm(8, 50 * 128, 16384, 132, pdl).ctas == 264u);
  CHECK(plan_m16_gemm(9, 49 * 128, 16384, 132, pdl).ctas == 132u);
  CHECK(plan_m16_gemm(16, 49 * 128, 16384, 132, pdl).ctas == 132u);
  for (const std::uint32_t m : {9u, 12u, 16u}) {
    CAPTURE(m);
    CHECK(plan_m16_gemm(m, 50 * 128, 16384, 132, pdl).ctas == 132u);
    CHECK(plan_m16_gemm(m, 51 * 128, 16384, 132, pdl).ctas == 264u);
    CHECK(plan_m16_gemm(m, 10240, 8192, 132, pdl).ctas == 132u);  // Llama-3-70B qkv
    CHECK(plan_m16_gemm(m, 132 * 128, 6144, 132, pdl).ctas == 132u);
    CHECK(plan_m16_gemm(m, 133 * 128, 6144, 132, pdl).ctas == 264u);
  }
  CHECK(plan_m16_gemm(8, 10240, 8192, 132, pdl).ctas == 264u);
  CHECK(plan_m16_gemm(1, 4096, 14336, 132, pdl).entry == "w8a16_gemm_m16_skinny_deep");
  // Where the plain plan is a skinny entry and the PDL plan is not: a 16 MiB layer with
  // K = 1152 (the seed's grid as split-K / 1 at 1 token, stream-K from 4). Above 8 tokens
  // 12288 x 2048 takes the three-per-SM form with and without PDL (768 CTAs of 4 warps in
  // its 792 slots; the first form's 660 do not hold them).
  CHECK(plan_m16_gemm(1, 14592, 1152, 132).entry == "w8a16_gemm_m16_skinny");
  CHECK(plan_m16_gemm(1, 14592, 1152, 132, pdl).entry == "w8a16_gemm_m16_splitk");
  CHECK(plan_m16_gemm(1, 14592, 1152, 132, pdl).split == 1);
  CHECK(plan_m16_gemm(6, 14592, 1152, 132, pdl).entry == "w8a16_gemm_m16_streamk");
  CHECK(plan_m16_gemm(9, 12288, 2048, 132).entry == "w8a16_gemm_m16_skinny_deep3");
  CHECK(plan_m16_gemm(9, 12288, 2048, 132, pdl).entry == "w8a16_gemm_m16_skinny_deep3");
  CHECK(plan_m16_gemm(9, 12288, 2048, 132, pdl).warps == 4);
  CHECK(plan_m16_gemm(1, 1536, 7168, 132, pdl).entry == "w8a16_gemm_m16_skinny_deep");
  CHECK(plan_m16_gemm(1, 1536, 7168, 132, M16LaunchOptions{}).entry ==
        plan_m16_gemm(1, 1536, 7168, 132).entry);
  // The skinny entry's chunks as one cluster: with PDL only, where all its CTAs fit at
  // once and are not spread over the SMs. kv_a: 36 groups x 7 chunks = 252 CTAs against
  // 528 slots up to 8 tokens (56 registers, 4 CTAs of 8 warps per SM) and 396 above (72,
  // 3), spread two to an SM instead; q_a: 672 CTAs.
  CHECK(w8a16_gemm_m16_skinny_ctas_per_sm(8, 8) == 4);
  CHECK(w8a16_gemm_m16_skinny_ctas_per_sm(9, 8) == 3);
  for (const std::uint32_t m : {1u, 8u, 9u, 16u}) {
    CAPTURE(m);
    CHECK_FALSE(plan_m16_gemm(m, 576, 7168, 132, pdl).chunk_cluster);
    CHECK(plan_m16_gemm(m, 576, 7168, 132, pdl).max_ctas_per_sm == 2u);
    CHECK_FALSE(plan_m16_gemm(m, 576, 7168, 132).chunk_cluster);
    CHECK_FALSE(plan_m16_gemm(m, 1536, 7168, 132, pdl).chunk_cluster);
    // From 12 tokens q_a takes the deep entry, up to 8 its form in chunks (the plan's cases
    // above).
    CHECK(plan_m16_gemm(m, 1536, 7168, 132, pdl).entry ==
          (m >= 12 || m <= 8 ? "w8a16_gemm_m16_skinny_deep" : "w8a16_gemm_m16_skinny"));
  }
  // On 64 SMs 448 x 7168's 196 CTAs fit at once up to 8 tokens (256 slots), four to an SM
  // as the registers allow (no spread), not above (192); kv_a's 36 row groups there take
  // the deep entry in chunks up to 8 tokens (144 CTAs, 56 % of its 256 slots); one chunk
  // (K = 1024) leaves nothing to hand off.
  CHECK(plan_m16_gemm(1, 448, 7168, 64, pdl).chunk_cluster);
  CHECK_FALSE(plan_m16_gemm(16, 448, 7168, 64, pdl).chunk_cluster);
  CHECK(plan_m16_gemm(1, 576, 7168, 64, pdl).entry == "w8a16_gemm_m16_skinny_deep");
  CHECK_FALSE(plan_m16_gemm(16, 576, 7168, 64, pdl).chunk_cluster);
  CHECK_FALSE(plan_m16_gemm(1, 576, 1024, 132, pdl).chunk_cluster);
  // Item 92's clusters of 7 chunks: 928 x 7168 (58 x 7 = 406 CTAs) takes one; 2048 x 4096
  // (128 x 4 = 512) and 1536 x 5120 (96 x 5 = 480) fit too but do not (over 90 % of the
  // slots, item 161; they take the deep entry, item 160).
  CHECK(plan_m16_gemm(1, 928, 7168, 132, pdl).chunk_cluster);
  CHECK_FALSE(plan_m16_gemm(1, 2048, 4096, 132, pdl).chunk_cluster);
  CHECK_FALSE(plan_m16_gemm(1, 1536, 5120, 132, pdl).chunk_cluster);
  CHECK(plan_m16_gemm(1, 1536, 5120, 132, pdl).entry == "w8a16_gemm_m16_skinny_deep");
  // Up to 8 tokens clusters of 4 chunks and more where they fill at most 90 % of the 528
  // slots (item 161): 1664 x 4096 (104 x 4 = 416 CTAs), 1200 x 6144 (75 x 6 = 450), 912 x
  // 7168 (57 x 7 = 399), 928 x 8192 (58 x 8 = 464), 1728 x 3584 (108 x 4 = 432); not 2048
  // x 3584 (128 x 4 = 512), nor above 8 tokens on fewer than 7 chunks.
  for (const std::uint32_t m : {1u, 4u, 8u}) {
    CAPTURE(m);
    for (const auto& shape : {std::pair{1664u, 4096u}, {1200u, 6144u}, {912u, 7168u},
                              {928u, 8192u}, {1728u, 3584u}}) {
      const auto n = shape.first;
      const auto k = shape.second;
      CAPTURE(n);
      CHECK(plan_m16_gemm(m, n, k, 132, pdl).chunk_cluster);
    }
    CHECK_FALSE(plan_m16_gemm(m, 2048, 3584, 132, pdl).chunk_cluster);
    CHECK(plan_m16_gemm(m, 2048, 3584, 132, pdl).entry == "w8a16_gemm_m16_skinny");
  }
  CHECK_FALSE(plan_m16_gemm(9, 1200, 6144, 132, pdl).chunk_cluster);
  CHECK_FALSE(plan_m16_gemm(9, 800, 6144, 132, pdl).chunk_cluster);  // 300 CTAs of 396
}

TEST_CASE("plan_m16_gemm: the deep kernel's 32-row form above 8 tokens where its CTAs fill the slots") {
  // 126 registers, counted as 128: one CTA of 16 warps per SM, two of 8, four of 4.
  CHECK(w8a16_gemm_m16_skinny_deep32_ctas_per_sm(16) == 1);
  CHECK(w8a16_gemm_m16_skinny_deep32_ctas_per_sm(8) == 2);
  CHECK(w8a16_gemm_m16_skinny_deep32_ctas_per_sm(4) == 4);
  const auto form = [](std::uint32_t m, std::uint32_t n, std::uint32_t k, std::uint32_t sms,
                       bool pdl) -> std::string {
    const std::optional<SkinnyDeepForm> f = w8a16_gemm_m16_skinny_deep32_form(m, n, k, sms, pdl);
    return f ? fmt::format("{}/{} x{}", f->kernel, f->warps, f->ctas_per_sm) : "none";
  };
  for (const bool pdl : {false, true}) {
    // Llama-3-8B down: 128 CTAs of 16 warps in 132 slots, 7 blocks per warp.
    CHECK(form(9, 4096, 14336, 132, pdl) == "w8a16_gemm_m16_skinny_deep32/16 x1");
    CHECK(form(16, 4096, 14336, 132, pdl) == "w8a16_gemm_m16_skinny_deep32/16 x1");
    CHECK(form(8, 4096, 14336, 132, pdl) == "none");
    // 8192 x 8192 (64 MiB): 256 CTAs of 8 warps in 264 slots.
    CHECK(form(12, 8192, 8192, 132, pdl) == "w8a16_gemm_m16_skinny_deep32/8 x2");
    // Qwen3-32B down: 160 CTAs fill 61 % of 264; Llama-3-8B o: 2 blocks per warp;
    // Llama-3-8B qkv: 192 of 264; Llama-3-8B gate_up: 896 CTAs do not fit.
    CHECK(form(16, 5120, 25600, 132, pdl) == "none");
    CHECK(form(16, 4096, 4096, 132, pdl) == "none");
    CHECK(form(16, 6144, 4096, 132, pdl) == "none");
    CHECK(form(16, 28672, 4096, 132, pdl) == "none");
    // Blocks per warp (item 157): 6 on 16 warps (4096 x 8192, 4 a warp, lost), 2 on 8
    // without PDL and 3 with it (below).
    CHECK(form(16, 4096, 12288, 132, pdl) == "w8a16_gemm_m16_skinny_deep32/16 x1");
    CHECK(form(16, 4096, 12160, 132, pdl) == "none");
    CHECK(form(16, 4096, 8192, 132, pdl) == "none");
    CHECK(form(12, 8192, 4096, 132, pdl) == "w8a16_gemm_m16_skinny_deep32/8 x2");
    CHECK(form(9, 7168, 3072, 132, pdl) == "w8a16_gemm_m16_skinny_deep32/8 x2");
    CHECK(form(16, 7168, 1920, 132, pdl) == "none");
  }
  // DeepSeek-V3 o and down (112 and 126 MiB): 224 CTAs of 8 warps in 264 slots; with PDL
  // stream-K keeps them.
  CHECK(form(16, 7168, 16384, 132, false) == "w8a16_gemm_m16_skinny_deep32/8 x2");
  CHECK(form(9, 7168, 18432, 132, false) == "w8a16_gemm_m16_skinny_deep32/8 x2");
  CHECK(form(16, 7168, 16384, 132, true) == "none");
  CHECK(form(16, 8192, 8200, 132, true) == "none");  // just over 64 MiB
  // The edges: 80 % of the slots (208 of 260 CTAs); on 8 warps 2 blocks per warp without
  // PDL, 3 with it.
  CHECK(form(16, 6656, 16384, 130, false) == "w8a16_gemm_m16_skinny_deep32/8 x2");
  CHECK(form(16, 6624, 16384, 130, false) == "none");
  CHECK(form(16, 8192, 2048, 132, false) == "w8a16_gemm_m16_skinny_deep32/8 x2");
  CHECK(form(16, 8192, 2048, 132, true) == "none");
  CHECK(form(16, 8192, 2944, 132, true) == "none");

  // The plan takes it on one chunk of K, no workspace.
  const M16Plan o = plan_m16_gemm(16, 7168, 16384, 132);
  CHECK(o.entry == "w8a16_gemm_m16_skinny_deep32");
  CHECK(o.warps == 8);
  CHECK(o.warp_blocks == 16);
  CHECK(o.split == 1);
  CHECK(o.ctas == 0);
  CHECK(w8a16_gemm_m16_skinny_workspace_bytes(7168, 16384, o.warps, o.warp_blocks) == 0);
  CHECK(plan_m16_gemm(16, 7168, 16384, 132, {true}).entry == "w8a16_gemm_m16_streamk");
  CHECK(plan_m16_gemm(8, 7168, 16384, 132).entry == "w8a16_gemm_m16_streamk");
}

TEST_CASE("plan_m16_gemm: the deep entry from 64 MiB up to 8 tokens, on CTAs of 8 warps") {
  const auto entry = [](std::uint32_t m, std::uint32_t n, std::uint32_t k, bool pdl) {
    return plan_m16_gemm(m, n, k, 132, M16LaunchOptions{pdl}).entry;
  };
  const std::string_view deep = "w8a16_gemm_m16_skinny_deep";
  const std::string_view streamk = "w8a16_gemm_m16_streamk";
  for (const std::uint32_t m : {1u, 4u, 8u}) {
    CAPTURE(m);
    // Without PDL from two thirds of the 528 slots (352 CTAs), with PDL from 80 % (423
    // CTAs), with K up to 12288 (item 110).
    CHECK(entry(m, 8192, 8192, false) == deep);
    CHECK(entry(m, 5632, 12288, false) == deep);
    CHECK(entry(m, 5504, 12288, false) == streamk);  // 344 CTAs
    CHECK(entry(m, 8192, 12288, false) == deep);
    CHECK(entry(m, 8192, 12416, false) == streamk);
    CHECK(entry(m, 7168, 16384, false) == streamk);
    CHECK(entry(m, 8192, 12288, true) == deep);
    CHECK(entry(m, 6784, 12288, true) == deep);      // 424 CTAs
    CHECK(entry(m, 6656, 12288, true) == streamk);   // 416
    CHECK(entry(m, 8192, 14336, true) == streamk);
    CHECK(entry(m, 7168, 18432, true) == streamk);
    // On 16 warps up to 14 blocks each (4096 x 16384: 256 CTAs in 264; not 4096 x 28800,
    // 14.06 blocks), and without PDL on 4 up to 12 (16384 x 4096: 1024 CTAs in 1056 slots;
    // 12288 x 6144: 768; not 14336 x 8192, 16 blocks).
    CHECK(entry(m, 4096, 16384, false) == deep);
    CHECK(entry(m, 4096, 28672, true) == deep);
    CHECK(entry(m, 4096, 28800, false) == streamk);
    CHECK(entry(m, 16384, 4096, false) == deep);
    CHECK(entry(m, 12288, 6144, false) == deep);
    CHECK(entry(m, 14336, 8192, false) == streamk);
    CHECK(entry(m, 16384, 4096, true) == streamk);
    // Not on 2 warps (Llama-3-8B gate_up, 1792 CTAs in 2112 slots), nor where the CTAs do
    // not fit.
    CHECK(entry(m, 28672, 4096, false) == streamk);
    CHECK(entry(m, 8704, 8192, false) == streamk);   // 544 CTAs
  }
  // Above 8 tokens the 32-row form or stream-K, as before.
  CHECK(entry(9, 8192, 8192, false) != deep);
  CHECK(plan_m16_gemm(1, 8192, 8192, 132).warps == 8);
  CHECK(plan_m16_gemm(1, 8192, 8192, 132).warp_blocks == 8);
}

TEST_CASE("plan_m16_gemm: with PDL, skinny and deep grids spread over the SMs at an even share") {
  // The grids it shares out: kv_a's 36 row groups x 7 chunks on the skinny kernel (2 x 4
  // chunks on skinny2, whatever blocks are passed), q_a's 96 x 4 in chunks of 2048 K,
  // DeepSeek-V3 o's 224 groups of 32 rows on one chunk.
  CHECK(w8a16_gemm_m16_skinny_grid_ctas("w8a16_gemm_m16_skinny", 576, 7168, 8, 0) == 252u);
  CHECK(w8a16_gemm_m16_skinny_grid_ctas("w8a16_gemm_m16_skinny2", 576, 7168, 8, 5) == 144u);
  CHECK(w8a16_gemm_m16_skinny_grid_ctas("w8a16_gemm_m16_skinny_deep", 1536, 7168, 8, 2) == 384u);
  CHECK(w8a16_gemm_m16_skinny_grid_ctas("w8a16_gemm_m16_skinny_deep32", 7168, 16384, 8, 16) ==
        224u);
  const M16LaunchOptions pdl{true};
  for (std::uint32_t m = 1; m <= 16; ++m) {
    CAPTURE(m);
    // Without PDL nothing is spread.
    for (const auto& [n, k] : {std::pair{576u, 7168u}, std::pair{1536u, 7168u},
                               std::pair{6144u, 4096u}, std::pair{10240u, 5120u}}) {
      CHECK(plan_m16_gemm(m, n, k, 132).max_ctas_per_sm == 0u);
    }
    // kv_a: 252 skinny CTAs, two to an SM where the registers allow 4 (3 above 8 tokens).
    CHECK(plan_m16_gemm(m, 576, 7168, 132, pdl).max_ctas_per_sm == 2u);
    // q_a up to 8 tokens: the deep kernel's 384 CTAs in chunks, three where 4 fit; above,
    // 96 CTAs of 16 warps, one per SM.
    CHECK(plan_m16_gemm(m, 1536, 7168, 132, pdl).max_ctas_per_sm == (m <= 8 ? 3u : 0u));
    // Llama-3-8B qkv: 384 deep CTAs of 8 warps, three where 4 fit; above 8 tokens the
    // three-per-SM form holds just three.
    CHECK(plan_m16_gemm(m, 6144, 4096, 132, pdl).max_ctas_per_sm == (m <= 8 ? 3u : 0u));
    // 12288 x 4096: 768 deep CTAs of 4 warps, six where 16 fit (item 119); above 8 tokens
    // the three-per-SM form holds just six.
    CHECK(plan_m16_gemm(m, 12288, 4096, 132, pdl).max_ctas_per_sm == (m <= 8 ? 6u : 0u));
    // Llama-3-8B o and down (256 CTAs of 16 or 8 warps, two per SM by their registers),
    // q_b (1536 CTAs: a share of 12), 928 x 7168 and 2048 x 7168 (a share of 4 where 4
    // fit), and stream-K's layers: not spread.
    for (const auto& shape : {std::pair{4096u, 4096u}, std::pair{4096u, 14336u},
                              std::pair{24576u, 1536u}, std::pair{928u, 7168u},
                              std::pair{2048u, 7168u}, std::pair{28672u, 4096u},
                              std::pair{7168u, 18432u}}) {
      const auto n = shape.first;
      const auto k = shape.second;
      CAPTURE(n);
      CHECK(plan_m16_gemm(m, n, k, 132, pdl).max_ctas_per_sm == 0u);
    }
  }
  // 928 x 7168 keeps its chunks as a cluster; a spread grid never runs as one.
  CHECK(plan_m16_gemm(1, 928, 7168, 132, pdl).chunk_cluster);
  CHECK_FALSE(plan_m16_gemm(1, 576, 7168, 132, pdl).chunk_cluster);
}
