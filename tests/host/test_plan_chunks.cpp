// plan_m16_gemm's rules for the deep entry in chunks of K (the caller's workspace): on
// narrow, deep layers without PDL (items 122 and 162), with PDL from 16 MiB (item 162),
// above 8 tokens on 4 warps (item 164), and on small layers up to 8 tokens (items 92 and
// 160). Each case pins a rule to the layers it was measured on and to its edges.
#include <doctest/doctest.h>

#include <cstdint>
#include <utility>

#include "metrale/m16_plan.hpp"
#include "metrale/w8a16_gemm_m16_skinny.hpp"

using namespace metrale;

TEST_CASE("plan_m16_gemm: without PDL, the deep entry in chunks on narrow, deep layers") {
  // Item 122: up to 8 tokens, under 64 MiB, K of 8192 and more, 80 row groups to under two
  // per SM, where the one-chunk form fills under three quarters of its slots: the first of
  // 8 warps of 2 blocks, 4 of 4 and 4 of 8 whose CTAs all fit, the partials through the
  // workspace; where K leaves a short last chunk (10240 on 8 warps of 4: 4096 + 4096 +
  // 2048) 4 of 4 still (item 123). Item 162: from 72 row groups at K = 8192 and 9216 and
  // from 48 at K of 10240 and more. Not with PDL, not above 8 tokens, not where the
  // one-chunk form fills the slots (3584 x 8192: 224 of 264; Llama-3-8B down: 256), not on
  // fewer row groups (1024 x 8192, 1088 x 9216, 752 x 12288) or more (5120 x 8192), not
  // under K = 8192 (q_a), not from 64 MiB. The C ABI's one-chunk plan
  // (plan_m16_gemm_one_chunk_deep) keeps one chunk.
  struct Case {
    std::uint32_t n, k, warps, blocks;
  };
  for (const std::uint32_t m : {1u, 4u, 8u}) {
    CAPTURE(m);
    for (const Case c : {Case{2304, 16384, 4, 8}, {2560, 14336, 4, 8}, {3072, 8192, 4, 4},
                         {2048, 16384, 4, 4}, {1792, 16384, 4, 4}, {1536, 12288, 4, 4},
                         {1280, 8192, 8, 2}, {1792, 8192, 8, 2}, {2304, 10240, 4, 4},
                         {2816, 10240, 4, 4}, {1280, 17408, 4, 4}, {1152, 8192, 8, 2},
                         {1264, 8192, 8, 2}, {1152, 9216, 8, 2}, {1024, 10240, 8, 2},
                         {1024, 14336, 8, 2}, {1088, 14336, 8, 2}, {768, 12288, 8, 2},
                         {1024, 20480, 4, 4}, {1152, 16384, 4, 4}}) {
      CAPTURE(c.n);
      const M16Plan p = plan_m16_gemm(m, c.n, c.k, 132);
      CHECK(p.entry == "w8a16_gemm_m16_skinny_deep");
      CHECK(p.warps == c.warps);
      CHECK(p.warp_blocks == c.blocks);
      CHECK(w8a16_gemm_m16_skinny_chunks(c.k, p.warps, p.warp_blocks) > 1);
      const M16Plan one_chunk = plan_m16_gemm_one_chunk_deep(m, c.n, c.k, 132);
      CHECK(w8a16_gemm_m16_skinny_chunks(c.k, one_chunk.warps, one_chunk.warp_blocks) <= 1);
    }
    CHECK(plan_m16_gemm_one_chunk_deep(m, 1280, 8192, 132).entry == "w8a16_gemm_m16_skinny");
    for (const auto& [n, k] : {std::pair{3584u, 8192u}, {4096u, 14336u}}) {
      const M16Plan p = plan_m16_gemm(m, n, k, 132);
      CHECK(p.entry == "w8a16_gemm_m16_skinny_deep");
      CHECK(p.warps == 16u);
      CHECK(w8a16_gemm_m16_skinny_chunks(k, p.warps, p.warp_blocks) == 1);
    }
    for (const auto& [n, k] : {std::pair{1024u, 8192u}, {1136u, 8192u}, {1088u, 9216u},
                               {752u, 12288u}, {5120u, 8192u}}) {
      const M16Plan p = plan_m16_gemm(m, n, k, 132);
      CHECK(w8a16_gemm_m16_skinny_chunks(k, p.warps, p.warp_blocks) <= 1);
    }
    CHECK(plan_m16_gemm(m, 1536, 7168, 132).warps == 7u);  // item 180's chunks (below)
    const M16Plan large = plan_m16_gemm(m, 4096, 16384, 132);
    CHECK(w8a16_gemm_m16_skinny_chunks(16384, large.warps, large.warp_blocks) <= 1);
  }
  for (const std::uint32_t m : {9u, 16u}) {
    const M16Plan p = plan_m16_gemm(m, 2304, 16384, 132);
    CHECK(w8a16_gemm_m16_skinny_chunks(16384, p.warps, p.warp_blocks) == 1);
  }
  // The rest of the plan is the same either way.
  for (std::uint32_t m = 1; m <= 16; ++m) {
    for (const auto& [n, k] : {std::pair{576u, 7168u}, {4096u, 4096u}, {28672u, 4096u},
                               {24576u, 1536u}, {7168u, 18432u}}) {
      const M16Plan a = plan_m16_gemm(m, n, k, 132);
      const M16Plan b = plan_m16_gemm_one_chunk_deep(m, n, k, 132);
      CHECK(a.entry == b.entry);
      CHECK(a.warps == b.warps);
      CHECK(a.warp_blocks == b.warp_blocks);
      CHECK(a.ctas == b.ctas);
    }
  }
}

TEST_CASE("plan_m16_gemm: with PDL, the deep entry in chunks on narrow, deep layers from 16 MiB") {
  // Item 162: up to 8 tokens, 16 to 64 MiB, K of 10240 and more, 48 row groups to one per
  // SM: 8 warps of 2 blocks on up to one and a half times their slots (528 on 132 SMs), else
  // 4 of 4 where all fit. Not without PDL (there item 122's form), not above 8 tokens (there
  // item 164's 4 warps), not on
  // fewer row groups (752 x 24576) or more (2304 x 16384), not at K = 8192 (2048 x 8192),
  // not from 64 MiB (2048 x 32768).
  struct Case {
    std::uint32_t n, k, warps, blocks;
  };
  const M16LaunchOptions pdl{true};
  for (const std::uint32_t m : {1u, 4u, 8u}) {
    CAPTURE(m);
    for (const Case c : {Case{1024, 16384, 8, 2}, {1536, 16384, 8, 2}, {2048, 12288, 8, 2},
                         {1280, 17408, 8, 2}, {1792, 16384, 4, 4}, {1024, 32768, 4, 4}}) {
      CAPTURE(c.n);
      const M16Plan p = plan_m16_gemm(m, c.n, c.k, 132, pdl);
      CHECK(p.entry == "w8a16_gemm_m16_skinny_deep");
      CHECK(p.warps == c.warps);
      CHECK(p.warp_blocks == c.blocks);
      CHECK(w8a16_gemm_m16_skinny_chunks(c.k, p.warps, p.warp_blocks) > 1);
      CHECK_FALSE(p.chunk_cluster);
    }
    for (const auto& shape : {std::pair{752u, 24576u}, {2304u, 16384u}, {2048u, 8192u},
                              {2048u, 32768u}}) {
      const auto n = shape.first;
      const auto k = shape.second;
      CAPTURE(n);
      const M16Plan p = plan_m16_gemm(m, n, k, 132, pdl);
      CHECK((p.entry != "w8a16_gemm_m16_skinny_deep" ||
             w8a16_gemm_m16_skinny_chunks(k, p.warps, p.warp_blocks) <= 1));
    }
  }
  const M16Plan above = plan_m16_gemm(9, 1536, 16384, 132, pdl);  // item 164's 4 warps
  CHECK(above.warps == 4u);
  CHECK(above.warp_blocks == 8u);
  const M16Plan without = plan_m16_gemm(1, 1536, 16384, 132);
  CHECK(without.warps == 4u);
  CHECK(without.warp_blocks == 4u);
}

TEST_CASE("plan_m16_gemm: above 8 tokens, the deep entry in chunks of 4 warps on narrow layers") {
  // Item 164: at 9-16 tokens, from 8 MiB (with PDL 10) to 64, K of 10240 and more, 40 row
  // groups to under 85 % of the SMs (item 165: without PDL also K of 8192-9216, from 80
  // groups to under 80 %): 4 warps of 4 blocks where their CTAs fit the 5 an SM holds, else
  // 4 of 8 on groups under three quarters of the SMs; with PDL spread where an SM's share is
  // under 5. Not at 6.25 MiB (640 x 10240), not with PDL at 8.75 (896 x 10240) nor at K =
  // 8192 (1536 x 8192), not at K = 8192 on 72 groups (1152 x 8192) nor on 106 (1696 x 8192),
  // not on 39 groups (624 x 28672), not from 85 % of the SMs (1856 x 10240: 116 groups; 2000
  // x 10240), not 4 of 8 from three quarters (1792 x 14336, 1920 x 12288: 112 and 120
  // groups, 4 of 4 not fitting), not on 144 groups (2304 x 16384), not up to 8 tokens.
  struct Case {
    std::uint32_t n, k, blocks, ctas, share;  // share: the PDL plan's spread, 0 for none
  };
  for (const std::uint32_t m : {9u, 12u, 16u}) {
    CAPTURE(m);
    for (const Case c : {Case{896, 20480, 4, 560, 0}, {1344, 14336, 4, 588, 0},
                         {1600, 12288, 4, 600, 0}, {1664, 10240, 4, 520, 4},
                         {640, 28672, 4, 560, 0}, {768, 16384, 4, 384, 3},
                         {1760, 12288, 4, 660, 0}, {1024, 28672, 8, 448, 4},
                         {1088, 20480, 8, 340, 3}, {1152, 24576, 8, 432, 4},
                         {1440, 16384, 8, 360, 3}, {960, 24576, 8, 360, 3}}) {
      CAPTURE(c.n);
      for (const bool with_pdl : {false, true}) {
        const M16Plan p = plan_m16_gemm(m, c.n, c.k, 132, M16LaunchOptions{with_pdl});
        CHECK(p.entry == "w8a16_gemm_m16_skinny_deep");
        CHECK(p.warps == 4u);
        CHECK(p.warp_blocks == c.blocks);
        CHECK(w8a16_gemm_m16_skinny_grid_ctas(p.entry, c.n, c.k, 4, c.blocks) == c.ctas);
        CHECK(p.max_ctas_per_sm == (with_pdl ? c.share : 0u));
        CHECK_FALSE(p.chunk_cluster);
      }
    }
    const M16Plan small = plan_m16_gemm(m, 896, 10240, 132);
    CHECK(small.warps == 4u);
    CHECK(small.warp_blocks == 4u);
    CHECK(plan_m16_gemm(m, 1024, 10240, 132, M16LaunchOptions{true}).warp_blocks == 4u);
    CHECK(plan_m16_gemm(m, 896, 10240, 132, M16LaunchOptions{true}).entry ==
          "w8a16_gemm_m16_skinny");
    const M16Plan shallow = plan_m16_gemm(m, 1536, 9216, 132);
    CHECK(shallow.warps == 4u);
    CHECK(shallow.warp_blocks == 4u);
    // With PDL (item 167) below 16 tokens at K = 8704-9728, from 88 groups to 104, spread;
    // not at 8192 (16 warps of 4 blocks each), not on 86 groups, not at 16 tokens.
    for (const auto& shape : {std::pair{1408u, 9216u}, {1536u, 9216u}, {1664u, 9216u},
                              {1440u, 8704u}, {1632u, 9728u}}) {
      const auto n = shape.first;
      const auto k = shape.second;
      CAPTURE(n);
      const M16Plan p = plan_m16_gemm(m, n, k, 132, M16LaunchOptions{true});
      const bool chunked = p.entry == "w8a16_gemm_m16_skinny_deep" &&
                           w8a16_gemm_m16_skinny_chunks(k, p.warps, p.warp_blocks) > 1;
      CHECK(chunked == (m < 16));
      if (m < 16) {
        CHECK(p.warps == 4u);
        CHECK(p.warp_blocks == 4u);
        CHECK(p.max_ctas_per_sm == 4u);
      }
    }
    for (const auto& shape : {std::pair{1536u, 8192u}, {1376u, 9216u}, {1696u, 9216u}}) {
      const auto n = shape.first;
      const auto k = shape.second;
      CAPTURE(n);
      const M16Plan p = plan_m16_gemm(m, n, k, 132, M16LaunchOptions{true});
      CHECK((p.entry != "w8a16_gemm_m16_skinny_deep" ||
             w8a16_gemm_m16_skinny_chunks(k, p.warps, p.warp_blocks) <= 1));
    }
    // K = 8192-9216 without PDL up to 103 groups (under 80 % of the SMs), not from 106.
    CHECK(plan_m16_gemm(m, 1648, 9216, 132).warp_blocks == 4u);
    CHECK(plan_m16_gemm(m, 1696, 8192, 132).warps == 16u);
    CHECK(plan_m16_gemm(m, 1696, 8192, 132).warp_blocks == 4u);  // one chunk of 64 blocks
    for (const auto& shape : {std::pair{640u, 10240u}, {1152u, 8192u}, {624u, 28672u},
                              {1856u, 10240u}, {2000u, 10240u}, {1792u, 14336u},
                              {1920u, 12288u}, {2304u, 16384u}}) {
      const auto n = shape.first;
      const auto k = shape.second;
      CAPTURE(n);
      for (const bool with_pdl : {false, true}) {
        const M16Plan p = plan_m16_gemm(m, n, k, 132, M16LaunchOptions{with_pdl});
        CHECK((p.entry != "w8a16_gemm_m16_skinny_deep" ||
               w8a16_gemm_m16_skinny_chunks(k, p.warps, p.warp_blocks) <= 1));
      }
    }
  }
  for (const std::uint32_t m : {1u, 8u}) {
    CAPTURE(m);
    CHECK(plan_m16_gemm(m, 640, 28672, 132).entry != "w8a16_gemm_m16_skinny_deep");
  }
}

TEST_CASE("plan_m16_gemm with PDL: the deep entry in chunks of K on small layers up to 8 tokens") {
  const M16LaunchOptions pdl{true};
  for (const std::uint32_t m : {1u, 4u, 8u}) {
    CAPTURE(m);
    // q_a: 96 row groups x 4 chunks of 8 warps x 2 blocks = 384 CTAs in 528 slots (73 %).
    const M16Plan q_a = plan_m16_gemm(m, 1536, 7168, 132, pdl);
    CHECK(q_a.entry == "w8a16_gemm_m16_skinny_deep");
    CHECK(q_a.warps == 8u);
    CHECK(q_a.warp_blocks == 2u);
    CHECK(q_a.split == 1u);
    CHECK(q_a.ctas == 0u);
    CHECK(w8a16_gemm_m16_skinny_chunks(7168, q_a.warps, q_a.warp_blocks) == 4u);
    CHECK(w8a16_gemm_m16_skinny_workspace_bytes(1536, 7168, q_a.warps, q_a.warp_blocks) ==
          96u * 3u * 256u * 8u);
    CHECK(plan_m16_gemm(m, 2048, 7168, 132, pdl).warp_blocks == 2u);  // 512 CTAs
    CHECK(plan_m16_gemm(m, 2560, 5120, 132, pdl).warp_blocks == 2u);  // 160 x 3 = 480
    CHECK(plan_m16_gemm(m, 1280, 6144, 132, pdl).warp_blocks == 2u);  // 80 x 3 = 240
    CHECK(plan_m16_gemm(m, 1264, 6144, 132, pdl).entry == "w8a16_gemm_m16_skinny");  // 237
    CHECK(plan_m16_gemm(m, 1024, 8192, 132, pdl).warp_blocks == 2u);  // 64 x 4 = 256
    // Not under 45 % of the slots (896 x 7168: 224 CTAs; kv_a: 144), nor where they do not
    // fit at once (3072 x 7168: 768), nor with K under 4096 or in one chunk, nor from 16
    // MiB, nor without PDL.
    for (const auto& shape : {std::pair{896u, 7168u}, {1264u, 6144u}, {576u, 7168u},
                              {3072u, 7168u}, {4096u, 2048u}, {2048u, 4096u}, {8192u, 2048u}}) {
      const auto n = shape.first;
      const auto k = shape.second;
      CAPTURE(n);
      CAPTURE(k);
      const M16Plan p = plan_m16_gemm(m, n, k, 132, pdl);
      CHECK((p.entry != "w8a16_gemm_m16_skinny_deep" || p.warp_blocks * p.warps >= k / 128));
    }
    CHECK(plan_m16_gemm(m, 1536, 7168, 132).warps == 7u);  // without PDL item 180's chunks
  }
  // Above 8 tokens, as before: the skinny entry, from 12 the deep entry on one chunk.
  CHECK(plan_m16_gemm(9, 1536, 7168, 132, pdl).entry == "w8a16_gemm_m16_skinny");
  CHECK(plan_m16_gemm(12, 1536, 7168, 132, pdl).warp_blocks == 4u);
}

TEST_CASE("plan_m16_gemm: under 16 MiB up to 8 tokens, the deep entry at K = 4096 and 6144") {
  // Item 160. One chunk where each warp gets 2 blocks (K = 4096 on 16 warps): without PDL
  // from 75 % of the 264 slots (198 CTAs), with PDL from 45 % (119), spread one CTA per SM
  // up to 132 CTAs, below it the skinny entry's cluster (item 161). Without PDL else 8 warps
  // of 2 blocks in equal chunks (K = 4096 or 6144) that fill half the 528 slots; with PDL
  // the one-chunk form of 3 blocks a warp where its CTAs fill two thirds and its chunks do
  // not fit (K = 5120: 177 row groups x 3 = 531).
  const auto plan = [](std::uint32_t m, std::uint32_t n, std::uint32_t k, bool pdl) {
    return plan_m16_gemm(m, n, k, 132, M16LaunchOptions{pdl});
  };
  const auto chunks = [](const M16Plan& p, std::uint32_t k) {
    return p.entry == "w8a16_gemm_m16_skinny_deep"
               ? w8a16_gemm_m16_skinny_chunks(k, p.warps, p.warp_blocks)
               : 0u;
  };
  for (std::uint32_t m = 1; m <= 8; ++m) {
    CAPTURE(m);
    for (const std::uint32_t n : {3584u, 3168u}) {  // Gemma-2-9B o; 198 CTAs
      const M16Plan p = plan(m, n, 4096, false);
      CHECK(p.warps == 16u);
      CHECK(chunks(p, 4096) == 1u);
      CHECK(plan_m16_gemm_one_chunk_deep(m, n, 4096, 132).warps == 16u);
    }
    for (const auto& shape : {std::pair{3152u, 4096u}, {2560u, 4096u}, {2112u, 4096u},
                              {2048u, 6144u}, {2560u, 6144u}, {1872u, 6144u}}) {
      const auto n = shape.first;
      const auto k = shape.second;
      CAPTURE(n);
      CAPTURE(k);
      const M16Plan p = plan(m, n, k, false);
      CHECK(p.warps == 8u);
      CHECK(p.warp_blocks == 2u);
      CHECK(chunks(p, k) == k / 2048);
      CHECK(plan_m16_gemm_one_chunk_deep(m, n, k, 132).entry == "w8a16_gemm_m16_skinny");
    }
    // Under half the slots (2096 x 4096: 262 CTAs), or a short last chunk (K = 5376 and
    // 7168 run chunks of 7 or 14 warps instead, below).
    for (const auto& [n, k] : {std::pair{2096u, 4096u}, {2560u, 5120u}}) {
      CHECK(plan(m, n, k, false).entry == "w8a16_gemm_m16_skinny");
    }
    for (const std::uint32_t n : {1904u, 2112u, 2560u, 3072u, 3584u}) {
      CAPTURE(n);
      const M16Plan p = plan(m, n, 4096, true);
      CHECK(p.warps == 16u);
      CHECK(chunks(p, 4096) == 1u);
      CHECK(p.max_ctas_per_sm == (n <= 2112 ? 1u : 0u));
    }
    for (const std::uint32_t n : {1888u, 1696u, 1600u}) {  // 118, 106, 100 CTAs: clusters
      CHECK(plan(m, n, 4096, true).entry == "w8a16_gemm_m16_skinny");
      CHECK(plan(m, n, 4096, true).chunk_cluster);
    }
    const M16Plan wide = plan(m, 2832, 5120, true);
    CHECK(wide.warps == 16u);
    CHECK(chunks(wide, 5120) == 1u);
    CHECK(chunks(plan(m, 2816, 5120, true), 5120) == 3u);  // 176 x 3 = 528
    CHECK(plan(m, 2832, 5120, false).entry == "w8a16_gemm_m16_skinny");
  }
  // Above 8 tokens without PDL on more row groups than SMs (item 173): at K = 4096 the
  // one-chunk form on 8 warps from 60 % of its slots (2560 x 4096's 160 CTAs, not 2432 x
  // 4096's 152), at K of 4608-8191 but 5120 4 warps of 4 blocks where they fit (2400 x 4608:
  // 150 x 3 CTAs; 2880 x 5632 and 2176 x 7680), not at K = 5120 (2464 x 5120); with PDL
  // the same (item 175).
  for (std::uint32_t m = 9; m <= 16; ++m) {
    CAPTURE(m);
    const M16Plan at_4096 = plan(m, 2560, 4096, false);
    CHECK(at_4096.entry == "w8a16_gemm_m16_skinny_deep");
    CHECK((at_4096.warps == 8u && chunks(at_4096, 4096) == 1u));
    CHECK(plan(m, 2432, 4096, false).entry == "w8a16_gemm_m16_skinny");
    CHECK(plan(m, 2560, 4096, true).warps == 8u);
    CHECK(chunks(plan(m, 2560, 4096, true), 4096) == 1u);
    CHECK(plan(m, 2432, 4096, true).entry == "w8a16_gemm_m16_skinny");
    for (const auto& [n, k] : {std::pair{2400u, 4608u}, {2880u, 5632u}, {2176u, 7680u}}) {
      const M16Plan p = plan(m, n, k, false);
      CHECK(p.entry == "w8a16_gemm_m16_skinny_deep");
      CHECK((p.warps == 4u && p.warp_blocks == 4u));
      const M16Plan with_pdl = plan(m, n, k, true);  // and with PDL (item 175)
      CHECK((with_pdl.warps == 4u && with_pdl.warp_blocks == 4u));
    }
    CHECK(plan(m, 2464, 5120, false).entry == "w8a16_gemm_m16_skinny");
    // And from 16 MiB where those CTAs fit (item 176): 2560 x 7168 (160 x 4 CTAs), not 3584 x
    // 5632 (224 x 3 of 660 slots), which keeps the one-chunk form.
    for (const bool pdl : {false, true}) {
      const M16Plan p = plan(m, 2560, 7168, pdl);
      CHECK((p.warps == 4u && p.warp_blocks == 4u));
      const M16Plan over = plan(m, 3584, 5632, pdl);
      CHECK((over.warps == 8u && chunks(over, 5632) == 1u));
    }
  }
  // From 16 MiB, as before.
  CHECK(plan(9, 2048, 6144, true).warp_blocks == 3u);
  CHECK(plan(1, 4096, 4096, false).warps == 16u);
}

TEST_CASE("plan_m16_gemm without PDL: K = 3584, 5376 and 7168 in equal chunks of 7 or 14 warps") {
  // Items 180-182, under 16 MiB up to 8 tokens. At K = 7168: 2 chunks of 14 warps of 2
  // blocks where their CTAs (row groups x 2) fit in the 264 slots and fill more than three
  // quarters of them, 1600-2112 rows (200-264); else 4 chunks of 7 warps where theirs fit in
  // 528 and fill five eighths: 1328-1584 rows (332-396); neither on 1312 x 7168 (328, 62 %)
  // nor 2176 x 7168 (past the slots). At K = 3584 the same on one chunk of 14 warps,
  // 3184-4224 rows (199-264), else on 2 of 7 where they fill four sevenths, 2416-3168 rows
  // (302-396); not 2400 (300) nor 4352 (past the slots). At K = 5376, 3 chunks of 7 warps
  // where theirs fit and fill four sevenths: 1616-2816 rows (303-528); not 1600 x 5376 (300,
  // 57 %) nor 2880 (540). Not at K = 8192, nor with PDL (8 warps of 2 blocks), nor above 8
  // tokens.
  const auto expect = [](std::uint32_t m, std::uint32_t n, std::uint32_t k,
                         std::uint32_t warps, std::uint32_t chunks) {
    CAPTURE(m);
    CAPTURE(n);
    CAPTURE(k);
    const M16Plan p = plan_m16_gemm(m, n, k, 132);
    CHECK(p.entry == "w8a16_gemm_m16_skinny_deep");
    CHECK(p.warps == warps);
    CHECK(p.warp_blocks == 2u);
    CHECK(w8a16_gemm_m16_skinny_chunks(k, p.warps, p.warp_blocks) == chunks);
    CHECK(w8a16_gemm_m16_skinny_workspace_bytes(n, k, p.warps, p.warp_blocks) ==
          std::uint64_t{n / 16} * (chunks - 1) * 256u * 8u);
    const std::uint32_t pdl_warps = plan_m16_gemm(m, n, k, 132, M16LaunchOptions{true}).warps;
    CHECK(pdl_warps != 7u);
    CHECK(pdl_warps != 14u);
    if (k >= 4096) CHECK(pdl_warps == 8u);
  };
  for (const std::uint32_t m : {1u, 2u, 4u, 6u, 8u}) {
    for (const std::uint32_t n : {1600u, 1664u, 1792u, 2048u, 2112u}) expect(m, n, 7168, 14, 2);
    for (const std::uint32_t n : {1328u, 1376u, 1392u, 1408u, 1536u, 1584u}) {
      expect(m, n, 7168, 7, 4);
    }
    for (const std::uint32_t n : {3200u, 3328u, 3584u, 4096u, 4224u}) expect(m, n, 3584, 14, 1);
    for (const std::uint32_t n : {2432u, 2560u, 2816u, 3072u, 3168u}) expect(m, n, 3584, 7, 2);
    for (const std::uint32_t n : {1616u, 1664u, 2048u, 2560u, 2816u}) expect(m, n, 5376, 7, 3);
    for (const auto& shape : {std::pair{1280u, 7168u}, {1312u, 7168u}, {2176u, 7168u},
                              {2304u, 3584u}, {2400u, 3584u}, {4352u, 3584u},
                              {1600u, 5376u}, {2880u, 5376u}, {1536u, 8192u}}) {
      // (Named copies: clang's CAPTURE cannot take a structured binding.)
      const auto n = shape.first;
      const auto k = shape.second;
      CAPTURE(m);
      CAPTURE(n);
      CAPTURE(k);
      const std::uint32_t warps = plan_m16_gemm(m, n, k, 132).warps;
      CHECK(warps != 7u);
      CHECK(warps != 14u);
    }
  }
  for (const std::uint32_t m : {9u, 12u, 16u}) {
    CHECK(plan_m16_gemm(m, 1536, 7168, 132).warps != 7u);
    CHECK(plan_m16_gemm(m, 2048, 7168, 132).warps != 14u);
    CHECK(plan_m16_gemm(m, 3584, 3584, 132).warps != 14u);
  }
}
