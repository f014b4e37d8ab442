#include "m16_plan_chunks.hpp"

#include <utility>

#include "metrale/kernel_launch.hpp"

namespace metrale::m16_plan {
namespace {

// The deep entry in chunks of K on `warps` warps of `blocks` blocks each.
M16Plan deep_in_chunks(std::uint32_t warps, std::uint32_t blocks) {
  return {"w8a16_gemm_m16_skinny_deep", 1, 0, 0, warps, blocks};
}

// The chunks of K of `warps` warps of `blocks` blocks each, their CTAs on `groups` row
// groups and the CTA slots of `sms` SMs at m tokens.
SmallChunkGrid chunk_grid(std::uint32_t m, std::uint64_t groups, std::uint32_t k,
                          std::uint32_t sms, std::uint32_t warps, std::uint32_t blocks) {
  const std::uint32_t chunks = w8a16_gemm_m16_skinny_chunks(k, warps, blocks);
  return {chunks, groups * chunks,
          std::uint64_t{sms} * w8a16_gemm_m16_skinny_deep_ctas_per_sm(m, warps)};
}

// Whether those chunks' CTAs on `groups` row groups all fit on `sms` SMs at once at m tokens.
bool chunks_fit(std::uint32_t m, std::uint64_t groups, std::uint32_t k, std::uint32_t sms,
                std::uint32_t warps, std::uint32_t blocks) {
  const SmallChunkGrid g = chunk_grid(m, groups, k, sms, warps, blocks);
  return g.ctas <= g.slots;
}

}  // namespace

SmallChunkGrid small_chunk_grid(std::uint32_t m, std::uint32_t n, std::uint32_t k,
                                std::uint32_t sms) {
  using G = SmallChunkGrid;
  return chunk_grid(m, div_ceil(n, 16), k, sms, G::kWarps, G::kBlocks);
}

// Under 16 MiB up to 8 tokens with K of 4096 and more, the deep entry on one chunk (`form`,
// all of whose CTAs fit): where each warp gets at most 2 blocks (K = 4096 on 16 warps),
// from 75 % of the slots without PDL and from 45 % with it (the launch spread one CTA per
// SM below 50 %, spread_if_suited); with PDL also where its CTAs fill two thirds of the
// slots and the chunks of chunked_deep_if_suited do not all fit. Item 160 (two runs, m = 1,
// 2, 4, 6, 8, 12 layers of 1536-3840 x 4096-8192, against the skinny entry and the deep
// entry in chunks): without PDL 3584 and 3840 x 4096 (85 and 91 %) took 0.85-0.87x the
// skinny entry's time, 0.95-0.98x the chunks'; at 61-73 % the chunks led
// (chunked_deep_without_pdl_if_suited). With PDL 0.82-0.93x the plan's choice from 2048 to
// 3840 x 4096 (48-91 %; at 48 % spread, 0.87x unspread), and 3072 x 5120 (73 %, 3 blocks a
// warp, its chunks over the slots) 0.89-0.90x the skinny entry's; where the chunks fit and
// a warp would get 3 blocks or more, the chunks led (2560 x 5120, 2048 and 2560 x 6144).
// Without PDL the bound was 80 % until 3328 x 4096 (79 %) took 1.05-1.07x the one-chunk
// form's time in chunks. With PDL it was 40 % while the skinny entry below it ran
// unclustered (1792 x 4096, 42 %: 1.09-1.12x); since its chunks run as a cluster there
// (chunk_cluster_suits), the cluster took 0.95-1.00x the one-chunk form's time on 106-116
// CTAs (item 161).
bool small_layer_one_chunk_suits(std::uint32_t m, std::uint32_t n, std::uint32_t k,
                                 std::uint32_t sms, bool pdl, const SkinnyDeepForm& form) {
  const std::uint64_t ctas = div_ceil(n, 16);
  const std::uint64_t slots = std::uint64_t{sms} * form.ctas_per_sm;
  if (m > 8 || k < 4096 || std::uint64_t{n} * k >= 16 * kMiB || ctas > slots) return false;
  if (w8a16_gemm_m16_skinny_deep_one_chunk_blocks(k, form.warps) <= 2) {
    return pdl ? 20 * ctas >= 9 * slots : 4 * ctas >= 3 * slots;
  }
  const SmallChunkGrid chunks = small_chunk_grid(m, n, k, sms);
  return pdl && 3 * ctas >= 2 * slots && chunks.ctas > chunks.slots;
}

// The deep kernel in chunks of K, its 8 warps on 2 blocks each, for callers that launch with
// PDL: under 16 MiB up to 8 tokens, with K of at least 4096 in two chunks or more, where its
// CTAs (row groups x chunks) all fit at once and fill 45 % of the slots. Item 92 (m = 1, 4
// and 8, with PDL, against the skinny entry on 8 warps, its chunks as a cluster or not):
// 0.86-0.95x its time on q_a (384 CTAs in 528 slots), 2048 x 7168 (512), 2560 x 5120
// (480), and on 5 layers the rule was not fitted on 0.88-0.96x (352-448 CTAs); 1.07-1.10x
// on 1024 x 7168 (256) and 1.06-1.07x on 3072 x 7168 (768, two waves), 0.96-1.02x on 1280 x
// 7168 (320). So it asked two thirds of the slots; since grids under them are spread
// (spread_if_suited, item 94), item 160 (two runs each, m = 1..8, 8 layers of 1024-1792 x
// 5120-8192 with 240-336 CTAs): spread they took 0.75-0.98x the time of the plan's choice
// then (the skinny entry, 1024 x 7168 and x 8192 as a cluster), 1.03x the skinny entry
// spread on 1536 x 5120; under 45 % the skinny entry led (1152 x 6144: 216 CTAs, as a
// cluster 0.97x; 768 x 8192: 192, spread 0.91x). The chunks hand their partials through
// the caller's workspace.
std::optional<M16Plan> chunked_deep_if_suited(std::uint32_t m, std::uint32_t n, std::uint32_t k,
                                              std::uint32_t sms, bool pdl) {
  if (!pdl || m > 8 || k < 4096 || std::uint64_t{n} * k >= 16 * kMiB) return std::nullopt;
  const SmallChunkGrid g = small_chunk_grid(m, n, k, sms);
  if (g.chunks < 2 || g.ctas > g.slots || 20 * g.ctas < 9 * g.slots) return std::nullopt;
  return deep_in_chunks(g.kWarps, g.kBlocks);
}

// Without PDL up to 8 tokens under 16 MiB at K = 3584, 5376 and 7168, which 8 warps of 2
// blocks do not split evenly, the deep entry in equal chunks of 7 warps of 2 blocks or twice
// that: at K = 3584 and 7168 on 14 warps (one chunk and two) where those CTAs all fit and
// fill more than three quarters of their slots (where the 7-warp CTAs would put a fourth on
// some SM), else on 7 (two chunks and four) where theirs fit and fill four sevenths at K =
// 3584, five eighths at 7168; at K = 5376 in 3 of 7 where theirs fit and fill four sevenths.
// Item 180 (one probe run at 314df7e, m = 1, 4 and 8,
// against the skinny entry on 8 warps, the plan's choice before, and 8 warps of 2 blocks in
// 4 chunks, the last of half the K): 7 warps took 0.91-0.95x the skinny entry's time and
// 0.94-0.97x the 8-warp chunks' on q_a (1536 x 7168, 384 CTAs of 528 slots) and 2048 x
// 7168 (512). Item 181 (two plancheck runs, m = 1, 2, 4, 6, 8, 15 layers): at K = 7168 14
// warps took 0.955-0.995x the time of 7 from 1664 rows (208 CTAs of 264 slots, 79 %) to 2112
// (264), 0.99-1.01x at 1600 (76 %), 1.07-1.09x on q_a (73 %); at K = 5376 7 warps took
// 0.90-0.99x the skinny entry's time from 1792 rows (336 CTAs of 528, 64 %) to 2816 (528),
// 1.00-1.03x at 1536 (55 %). Held out (the same, 14 layers): on 1584 x 7168 (396 7-warp
// CTAs, 3 per SM) the 7-warp chunks took 0.92-0.94x the 14-warp ones' time, from 1696 rows
// 1.01-1.04x (so more than three quarters, not from); at K = 5376 on 1664 rows (312 CTAs,
// 59 %) 0.96-0.99x the skinny entry's (so four sevenths, not three fifths). Item 182 (a
// plancheck run, m = 1, 2, 4, 6, 8): at K = 7168 the 7-warp chunks took 0.95-0.98x the skinny
// entry's time on 1376 rows (344 CTAs, 65 %), as on 1344 (64 %) at 6 and 8 tokens in item
// 181, where 1280 (61 %) lost 0-4 % (so five eighths, not two thirds); at K = 3584, where the
// one-chunk form on 16 warps ran before, 14 warps took 0.976-0.995x its time on 3328 and
// 3840 rows (208 and 240 CTAs of 264), as on 3584 and 4096 in item 181, and the 7-warp chunks
// 0.967-0.977x on 2816 (352 CTAs of 528, 67 %), as on 2560 and 3072 (61 and 73 %); on 2304
// (55 %) the skinny entry led them by 4-5 %.
namespace {

std::optional<M16Plan> seven_warp_chunks_if_suited(std::uint32_t m, std::uint64_t groups,
                                                   std::uint32_t k, std::uint32_t sms) {
  const std::uint32_t blocks = k / 128;
  if (blocks != 28 && blocks != 42 && blocks != 56) return std::nullopt;
  if (blocks != 42) {  // 14 warps of 2 blocks: one chunk at K = 3584, two at 7168
    const SmallChunkGrid wide = chunk_grid(m, groups, k, sms, 14, 2);
    if (wide.ctas <= wide.slots && 4 * wide.ctas > 3 * wide.slots) return deep_in_chunks(14, 2);
  }
  const SmallChunkGrid g = chunk_grid(m, groups, k, sms, 7, 2);
  const bool filled = blocks == 56 ? 8 * g.ctas >= 5 * g.slots : 7 * g.ctas >= 4 * g.slots;
  if (g.ctas > g.slots || !filled) return std::nullopt;
  return deep_in_chunks(7, 2);
}

}  // namespace

// The deep kernel in chunks of K above 8 tokens, with or without PDL, on layers under 64
// MiB with K of at least 10240 and from 40 row groups to under 85 % of the SMs (where the
// one-chunk form, w8a16_gemm_m16_skinny_deep_form, runs one CTA of 16 warps per group, one
// per SM), without PDL with K of 8192-10239 from 80 groups to under 80 %, and with PDL below
// 16 tokens with K of 8192-10239 that 16 warps do not split evenly (not 8192) from two thirds
// of the SMs to under 80 %: on 4 warps of 4 blocks where their CTAs (row groups x chunks) all
// fit at once,
// else on 4 warps of 8 where those fit and the groups are under three quarters of the SMs.
// At 9-16 tokens an SM holds 5 CTAs of 4 warps but 2 of 8, so the 8-warp chunks of 8
// tokens and fewer do not fit. With PDL the grid is spread where an SM's share is under
// those 5 (spread_if_suited).
// Item 164 (two runs each, m = 9-16; fit on 33 layers of 640-2000 x 8192-32768, the byte
// bounds on the last 12 of them, then checked on 10 more): without PDL 4 of 4 took
// 0.40-0.99x the plan's choice then (the one-chunk form, split-K, stream-K, the skinny
// entry) where they fit, 4 of 8 0.57-0.98x where 4 of 4 did not; with PDL, spread where
// spread_if_suited spreads them, 0.37-1.02x. On 116 and 125 groups (88 and 95 %) the
// one-chunk form and 4 of 4 came within 3.5 % of each other, and on 112 and 120 (85 and
// 91 %, 4 of 4 not fitting) the one-chunk form led 4 of 8 by 2-12 %. Under 8 MiB the skinny
// entry led (640 x 10240: 1.01-1.05x), and with PDL under 10 (8.75-9.6 MiB: 0.98-1.06x). On
// the 10 layers held out the plan's choice was the fastest entry in 27 of 30 cases without
// PDL, within 2 % in 26 of 30 with it. Item 165 (K of 8192-9216 without PDL; fit on 16
// layers of 1024-1760 rows, two runs each, m = 9-16): 4 of 4 led the skinny entry and the
// one-chunk form from 80 groups (on 64-72 only at 16 tokens; on 82 with a short last chunk
// 0.97-1.03x the skinny entry) to 100 (76 %), and the one-chunk form led from 104 groups
// (by 0-4 %, most at 16 tokens); on 5 layers held out (81-103
// groups) 0.907-1.013x the old choice's time (15 cases, median 0.955). Where 4 of 4 overflow
// the slots only through a short last chunk, 4 of 8 stays: counting that chunk as its
// share took 0.90-0.98x 4 of 8's time at K = 15360 but 1.006-1.025x at 13312, 17408 and
// 19456. Item 167 (with PDL; fit on item 165's PDL rows): at K = 9216 the one-chunk form's
// 16 warps take 5 blocks or 4, and 4 of 4 spread led it and the skinny entry on 90-103
// groups; at 8192 (4 blocks each) it did not. Held out (two runs, m = 10, 13, 16, 7 layers
// of 1408-1664 x 8704-9728, 88-104 groups): 0.84-1.01x the old choice's time at 10 tokens,
// 0.96-0.99x at 13, 0.99-1.02x at 16; two more runs on 6 of them: 0.97-0.99x at 14,
// 0.98-1.01x at 15. Hence below 16 tokens.
// Also with K of 4608-8191 on more row groups than SMs (where the one-chunk form has CTAs of 8
// warps; at most 20.6 MiB where they fit), on 4 warps of 4 blocks where those fit, but at K = 5120,
// whose 40 blocks 8 warps split evenly into 5 each. Item 173 (without PDL; two runs, m = 9, 12, 16,
// 13 layers of 2240-3520 x 4608-7168, 140-220 groups): 4 of 4 took 0.74-0.99x the skinny entry's
// time and 0.87-0.99x the one-chunk form's on 8 warps (whose warps take 4.5-7 blocks each); at K =
// 5120 (2496 x 5120) all three within 3.3 %, and at K = 4096 (4 blocks a warp) the one-chunk form
// led (deep_form_if_suited); held out on 11 layers 0.81-1.01x the old choice's time. Item 175 (with
// PDL, two runs, m = 9, 12, 16, 9 of those layers): 4 of 4, spread where spread_if_suited spreads
// it, within 1.2 % of the fastest PDL entry on each, 0.83-1.01x the skinny entry's time. Item 176
// (from 16 MiB, two runs each without and with PDL, m = 9, 12, 16; fit on 7 layers of 2304-3328 x
// 5376-7680, held out on 9 of 2208-3520 x 5376-7680): 0.82-1.00x the one-chunk form's time without
// PDL, median 0.97; with PDL 0.78-1.00x that form's or split-K's, median 0.97.
std::optional<M16Plan> chunked_deep_above_8_tokens(std::uint32_t m, std::uint32_t n,
                                                   std::uint32_t k, std::uint32_t sms,
                                                   bool pdl) {
  const std::uint64_t groups = div_ceil(n, 16);
  const std::uint64_t bytes = std::uint64_t{n} * k;
  const std::uint64_t sm64 = sms;
  if (m > 8 && k >= 4608 && k < 8192 && k != 5120 && groups > sm64) {  // items 173, 175, 176
    if (chunks_fit(m, groups, k, sms, 4, 4)) return deep_in_chunks(4, 4);
    return std::nullopt;
  }
  if (m <= 8 || k < 8192 || bytes < (pdl ? 10 : 8) * kMiB || bytes >= kLargeLayerBytes) {
    return std::nullopt;
  }
  // The row groups each depth takes, as a share of the SMs.
  bool in_range = false;
  if (k >= 10240) {
    in_range = groups >= 40 && 20 * groups < 17 * sm64;  // under 85 %
  } else if (!pdl) {
    in_range = groups >= 80 && 5 * groups < 4 * sm64;  // under 80 %
  } else if (m < 16 && k / 128 % 16 != 0) {  // 16 warps would split K unevenly (item 167)
    in_range = 3 * groups >= 2 * sm64 && 5 * groups < 4 * sm64;
  }
  if (!in_range) return std::nullopt;
  if (chunks_fit(m, groups, k, sms, 4, 4)) return deep_in_chunks(4, 4);
  if (4 * groups < 3 * sm64 && chunks_fit(m, groups, k, sms, 4, 8)) return deep_in_chunks(4, 8);
  return std::nullopt;
}

// The deep kernel in chunks of K without PDL, up to 8 tokens, on layers under 64 MiB with K
// of at least 8192 and 80 row groups to under two per SM (1265-4208 rows on 132 SMs, of
// which 1280-3584 were measured; from 48 or 72 groups, item 162, below) whose one-chunk
// form (w8a16_gemm_m16_skinny_deep_form) fills under three quarters of its CTA slots: the
// first of 8 warps of 2 blocks, 4 of 4 and 4 of 8 whose CTAs (row groups x chunks) all fit
// at once, the chunks' partials through the caller's workspace. Item 122 (one probe run, 8
// layers of 1280-3584 x 8192-16384, m = 1, 4 and 8): the plan's choice before took 1.130x
// the fastest entry (worst 1.314x, split-K and stream-K on 1792 x 16384), the form that
// fits with the most warps 1.001x (worst 1.019x; 3584 x 8192, whose one-chunk form fills
// 85 %, within 2 %). On 8 other layers that form took 1.016x (worst 1.128x: 2304 x 10240, 8
// warps of 4 blocks in 3 chunks, the last of half the K, against 4 of 4 in 5 equal ones).
// Item 123: a warp's blocks, not its CTA's warps, set how long it streams, and a short last
// chunk leaves warps idle; so the fewest blocks per warp, ties to more CTAs. 8 warps of 4
// blocks never comes first: where its CTAs fit, those of 4 warps of 4 do. Item 162 (two
// runs each, m = 1, 4 and 8, 48-79 row groups, against the skinny entry on 8 warps): 8
// warps of 2 blocks took 0.85-0.94x its time at K of 10240-16384 on 48-76 groups,
// 0.95-0.98x at K = 8192 on 74-79 and 0.95-0.99x at 9216 on 72; 0.99-1.02x at 8192 on
// 71-72, 1.02-1.07x on 64-68. Where its CTAs do not all fit, 4 warps of 4 took 0.91-0.98x
// (1024 x 20480, 1152 x 16384, 1216 x 14336). Hence from 48 groups at K of 10240 and more,
// from 72 below.
// Under 16 MiB also at K = 4096 and 6144, in equal chunks of 8 warps of 2 blocks whose CTAs
// all fit and fill half the slots, where the one-chunk form does not suit
// (small_layer_one_chunk_suits). Item 160 (two runs, m = 1, 2, 4, 6, 8): 0.91-0.93x the
// skinny entry's time on 2560 x 4096 (320 CTAs of 528 slots), 0.88-0.91x on 3072 x 4096
// (384), 0.88-0.92x on 2048 x 6144 (384) and 0.90-0.91x on 2560 x 6144 (480); 0.99-1.03x
// on 2048 x 4096 (256); where the last chunk is short 0.96-1.02x (2560 x 5120, 2048 x 7168).
// K = 5376 and 7168 (42 and 56 blocks) do not split into equal chunks of 8 warps of 2
// blocks, but do into chunks of 7 warps of 2 (seven_warp_chunks_if_suited).
// `one_chunk`: w8a16_gemm_m16_skinny_deep_form of the shape.
std::optional<M16Plan> chunked_deep_without_pdl_if_suited(std::uint32_t m, std::uint32_t n,
                                                          std::uint32_t k, std::uint32_t sms,
                                                          bool pdl,
                                                          const SkinnyDeepForm& one_chunk) {
  const std::uint64_t bytes = std::uint64_t{n} * k;
  if (pdl || m > 8 || bytes >= kLargeLayerBytes) return std::nullopt;
  const std::uint64_t groups = div_ceil(n, 16);
  if (bytes < 16 * kMiB && k >= 3584 && k < 8192) {  // from 4096 but K = 3584 (28 blocks)
    const SmallChunkGrid g = small_chunk_grid(m, n, k, sms);
    if (k / 128 % (g.kWarps * g.kBlocks) != 0) {
      return seven_warp_chunks_if_suited(m, groups, k, sms);
    }
    if (g.ctas > g.slots || 2 * g.ctas < g.slots ||
        small_layer_one_chunk_suits(m, n, k, sms, false, one_chunk)) {
      return std::nullopt;
    }
    return deep_in_chunks(g.kWarps, g.kBlocks);
  }
  if (k < 8192) return std::nullopt;
  const std::uint64_t min_groups = k >= 10240 ? 48 : 72;
  if (groups < min_groups || groups >= 2 * std::uint64_t{sms}) return std::nullopt;
  if (4 * groups >= 3 * std::uint64_t{sms} * one_chunk.ctas_per_sm) return std::nullopt;
  for (const auto& [warps, blocks] : {std::pair{8u, 2u}, {4u, 4u}, {4u, 8u}}) {
    if (chunks_fit(m, groups, k, sms, warps, blocks)) return deep_in_chunks(warps, blocks);
  }
  return std::nullopt;
}

// The deep kernel in chunks of K with PDL on narrow, deep layers from 16 MiB (under it,
// chunked_deep_if_suited): up to 8 tokens, under 64 MiB, K of at least 10240, 48 row
// groups to one per SM, where the one-chunk form fills under three quarters of its slots:
// 8 warps of 2 blocks where its CTAs (row groups x chunks) fill at most one and a half
// times the slots, else 4 of 4 where all of those fit. With PDL a second wave of the
// 8-warp CTAs costs less than the wider chunks' longer streams: item 162 (two runs, m = 1,
// 4 and 8, 12 layers of 1024-2048 x 12288-32768) had it fastest up to 768 CTAs on 528
// slots, 4 of 4 from 896; this rule's choice took at most 1.009x the fastest PDL entry,
// the plan's before (split-K or stream-K with PDL, the skinny entry at 16 MiB) 1.05-1.53x.
// On 10 other layers (896-2000 x 10240-28672) at most 1.013x; 0.58-0.94x the old choice.
// `one_chunk`: w8a16_gemm_m16_skinny_deep_form of the shape.
std::optional<M16Plan> chunked_deep_narrow_with_pdl_if_suited(std::uint32_t m, std::uint32_t n,
                                                             std::uint32_t k, std::uint32_t sms,
                                                             bool pdl,
                                                             const SkinnyDeepForm& one_chunk) {
  const std::uint64_t bytes = std::uint64_t{n} * k;
  if (!pdl || m > 8 || k < 10240 || bytes < 16 * kMiB || bytes >= kLargeLayerBytes) {
    return std::nullopt;
  }
  const std::uint64_t groups = div_ceil(n, 16);
  if (groups < 48 || groups > sms) return std::nullopt;
  if (4 * groups >= 3 * std::uint64_t{sms} * one_chunk.ctas_per_sm) return std::nullopt;
  const SmallChunkGrid g = small_chunk_grid(m, n, k, sms);
  if (2 * g.ctas <= 3 * g.slots) return deep_in_chunks(g.kWarps, g.kBlocks);
  if (chunks_fit(m, groups, k, sms, 4, 4)) return deep_in_chunks(4, 4);
  return std::nullopt;
}

}  // namespace metrale::m16_plan
