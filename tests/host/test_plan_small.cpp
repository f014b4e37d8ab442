// plan_m16_gemm's rules for the layers under 64 MiB on the skinny and deep entries' one
// chunk of K, by K (512-896, 1024, under 4096) and size, and their grids spread over the
// SMs with PDL; measured on an H200 (docs/performance.md). These cases pin each rule to
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
  // to 8. Not under 8 MiB (2048 x 2048, 4096 x 1536; with PDL up to 8 tokens 4096 x 1536
  // takes item 184's one chunk).
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
      CHECK(plan_m16_gemm(m, 2048, 2048, 132, launch).entry == "w8a16_gemm_m16_skinny");
      CHECK(plan_m16_gemm(m, 4096, 1536, 132, launch).entry ==
            (with_pdl && m <= 8 ? "w8a16_gemm_m16_skinny_deep" : "w8a16_gemm_m16_skinny"));
    }
  }
}

TEST_CASE("plan_m16_gemm: with PDL at K of 1152-3584, the deep entry on more row groups than SMs") {
  // Items 183-185 and 187: up to 8 tokens under 16 MiB the one-chunk form on 16 warps,
  // unspread, where its CTAs outnumber the SMs (133 row groups on 132 SMs) and fit (264),
  // where the skinny entry ran before; at K of 3200-3584 from five sixths of the SMs
  // too (110 groups), one CTA per SM. Not on 132 groups at K = 3072, 128 at K = 2560, 109
  // at K of 3200-3584, 132 at K = 1152, at K = 1024, without PDL, nor above 8 tokens.
  const M16LaunchOptions pdl{true};
  struct Case {
    std::uint32_t n, k, share;
  };
  for (const std::uint32_t m : {1u, 2u, 4u, 6u, 8u}) {
    for (const Case c : {Case{2304, 3584, 0}, {2368, 3584, 0}, {2688, 3584, 0}, {2800, 3584, 0},
                         {2144, 3584, 0}, {1792, 3584, 1}, {1760, 3584, 1}, {2128, 3072, 0},
                         {2432, 3072, 0}, {2432, 2560, 0}, {3072, 2560, 0}, {2176, 2048, 0},
                         {3584, 2048, 0}, {4096, 2048, 0}, {2432, 1920, 0}, {2176, 1536, 0},
                         {4224, 1536, 0}, {2048, 3328, 1}, {1760, 3328, 1}, {2048, 3200, 1},
                         {1760, 3200, 1}, {2560, 1408, 0}, {2432, 1408, 0}, {2432, 1280, 0},
                         {2176, 1280, 0}, {4096, 1280, 0}, {2176, 1152, 0}, {3584, 1152, 0}}) {
      CAPTURE(m);
      CAPTURE(c.n);
      CAPTURE(c.k);
      const M16Plan p = plan_m16_gemm(m, c.n, c.k, 132, pdl);
      CHECK(p.entry == "w8a16_gemm_m16_skinny_deep");
      CHECK(p.warps == 16u);
      CHECK(p.max_ctas_per_sm == c.share);
    }
    for (const auto& shape : {std::pair{1744u, 3584u}, {2112u, 3072u}, {2048u, 2560u},
                              {1744u, 3328u}, {1744u, 3200u}, {2048u, 3072u},
                              {2112u, 1152u}, {2560u, 1024u}, {3584u, 1024u}}) {
      const auto n = shape.first;
      const auto k = shape.second;
      CAPTURE(m);
      CAPTURE(n);
      CAPTURE(k);
      CHECK(plan_m16_gemm(m, n, k, 132, pdl).entry == "w8a16_gemm_m16_skinny");
    }
    CHECK(plan_m16_gemm(m, 2304, 3584, 132).entry == "w8a16_gemm_m16_skinny");
    CHECK(plan_m16_gemm(m, 2432, 2560, 132).entry == "w8a16_gemm_m16_skinny");
    CHECK(plan_m16_gemm(m, 2176, 1536, 132).entry == "w8a16_gemm_m16_skinny");
    CHECK(plan_m16_gemm(m, 2560, 1408, 132).entry == "w8a16_gemm_m16_skinny");
    CHECK(plan_m16_gemm(m, 2560, 1152, 132).entry == "w8a16_gemm_m16_skinny");
  }
  for (const std::uint32_t m : {9u, 12u, 16u}) {
    CHECK(plan_m16_gemm(m, 2304, 3584, 132, pdl).entry == "w8a16_gemm_m16_skinny");
    CHECK(plan_m16_gemm(m, 2432, 2560, 132, pdl).entry == "w8a16_gemm_m16_skinny");
    CHECK(plan_m16_gemm(m, 2560, 1408, 132, pdl).entry == "w8a16_gemm_m16_skinny");
    CHECK(plan_m16_gemm(m, 2560, 1152, 132, pdl).entry == "w8a16_gemm_m16_skinny");
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
