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
  // x 3584 (128 x 4 = 512; the deep entry's one chunk there, item 183), nor above 8 tokens on
  // fewer than 7 chunks.
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
    CHECK(plan_m16_gemm(m, 2048, 3584, 132, pdl).entry == "w8a16_gemm_m16_skinny_deep");
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
