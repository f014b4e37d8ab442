#include "metrale/m16_plan.hpp"

#include <algorithm>
#include <optional>

#include "m16_plan_chunks.hpp"
#include "m16_plan_deep.hpp"
#include "metrale/kernel_launch.hpp"
#include "metrale/w8a16_gemm_m16.hpp"
#include "metrale/w8a16_gemm_m16_skinny.hpp"
#include "metrale/w8a16_gemm_m16_splitk.hpp"

namespace metrale {

std::uint32_t streamk_plan_stages(std::uint32_t ctas, std::uint32_t sm_count) {
  // Measured on two CTAs per SM over the six layers of 64 MiB and more, each against the
  // default 4 stages in the same run. Up to 8 tokens, 3 stages took 0.97-0.99x the time
  // in every case of two runs (68a7eb3 without PDL, 3146d7c with and without; DeepSeek-V3
  // o m = 1 34.52 against 35.95 us); 2 stages 0.98-1.04x, 5 to 10 stages more. Above 8
  // tokens they did not pay until the ring's position became counters (item 109); since,
  // on 22 layers of 64-224 MiB at 12 and 16 tokens (item 110, two runs), 3 stages took
  // 0.954-0.990x the time without PDL and 0.985-1.004x with it. On one CTA per SM 4 stays
  // best (3: 1.00-1.03x; 6: 1.02-1.05x; item 110: 1.01-1.08x).
  return sm_count != 0 && ctas >= 2 * sm_count ? 3 : 0;
}

namespace {

using m16_plan::chunked_deep_above_8_tokens;
using m16_plan::chunked_deep_if_suited;
using m16_plan::chunked_deep_narrow_with_pdl_if_suited;
using m16_plan::chunked_deep_without_pdl_if_suited;
using m16_plan::deep_form_if_suited;
using m16_plan::deep_form_on_narrow_dram;
using m16_plan::kLargeLayerBytes;
using m16_plan::kMiB;
using m16_plan::narrow_dram;
using m16_plan::shallow_layer_warps;
using m16_plan::spreadable;

// Stream-K on layers of 64 MiB and more: two CTAs per SM with 3 stages, or up to 8 tokens
// one CTA per SM (4 stages) where the layer has few units per SM and few tiles, so that
// on two per SM most tiles would be split over several CTAs. Item 110 (22 layers of
// 64-224 MiB, m = 1..8, two runs; after the ring's position became counters, item 109):
// one CTA per SM took 0.931-1.012x the time of two (median 0.980) without PDL where this
// rule takes it (up to 64 units per SM, fewer tiles than two per SM: Qwen3-32B and
// DeepSeek-V3 down, DeepSeek-V3 o, Llama-3-8B gate_up), 0.999-1.021x where it does not.
// With PDL two per SM hide more of the launch, and one per SM paid only on fewer units
// and tiles: 0.928-0.999x (median 0.961) up to 56 units per SM on at most one tile per
// two SMs, 0.994-1.039x elsewhere (DeepSeek-V3 down 1.004-1.015x, Llama-3-8B gate_up
// 1.00-1.01x). Since two per SM space their first stages (item 152), one per SM leads only
// on fewer tiles still (item 153, m = 1, 4, 8, each form twice, eight layers of 64-112 MiB
// with up to 56 units per SM): 0.952-0.996x the 3-stage form's time on 32-48 tiles,
// 1.007-1.025x on 56 and 64 (DeepSeek-V3 o, 7168 x 12288, 8192 x 12288), but for 8192 x
// 8192 (64 tiles, 31 units per SM: 0.994-0.996x). Above 8 tokens (item 155, m = 9, 12,
// 16, twice, 12 layers of 64-250 MiB, after the reducer's contributors moved to the start):
// one per SM took 0.87-0.98x the time of two without PDL on the layers of 32-64 tiles with
// up to 64 units per SM, 0.99-1.01x on Llama-3-8B gate_up (224 tiles) and 1.01-1.03x on
// 121 units per SM; with PDL 0.90-0.97x on 32-48 tiles and 0.99-1.02x on 56 (DeepSeek-V3
// o and down), so the PDL rule holds for every m and the plain one takes at most one tile
// per SM above 8 tokens. Where the deep kernel's 32-row form is suited it still comes first.
// With PDL above 8 tokens also on up to one tile per SM where each SM gets at most 49
// units (item 160, m = 9..16, two runs, 9 layers of 64-100 MiB with 56-112 tiles): 0.92-0.98x
// the time of two per SM at 9-14 tokens and 0.96-1.00x at 16 on 8 of them (30.6-48.5
// units per SM); 11264 x 7168 (88 tiles) 1.00-1.01x.
// On narrow DRAM bandwidth per SM (`narrow`: an H100, item 189) one per SM takes above 8 tokens
// without PDL the bound it has up to 8 tokens: up to 64 units per SM and fewer tiles than
// two per SM. On the H100 the 3-stage form on two per SM took 1.021-1.039x its time there
// (24576 x 4096, 28672 x 3584 and Llama-3-8B gate_up at 12 and 16 tokens); held out (the
// set dram8a, 9 layers of 66-128 MiB at 9, 12 and 16 tokens, two runs) one per SM took
// 0.954-0.994x the 3-stage form's time (median 0.976). With PDL it took 0.976-1.026x
// there (1.021-1.026x on 18432 x 7168): no rule.
M16Plan large_layer_streamk(std::uint32_t m, std::uint32_t n, std::uint32_t k,
                            std::uint64_t sms, bool narrow, bool pdl) {
  const std::uint64_t tiles = div_ceil(n, 128);
  const std::uint64_t units = tiles * (k / 128);
  const bool few_tiles = units <= 56 * sms && 8 * tiles <= 3 * sms;
  const bool one_per_sm =
      pdl ? few_tiles || (m > 8 && units <= 49 * sms && tiles <= sms)
          : units <= 64 * sms && (m <= 8 || narrow ? tiles < 2 * sms : tiles <= sms);
  if (one_per_sm) return {"w8a16_gemm_m16_streamk", 1, static_cast<std::uint32_t>(sms)};
  const auto ctas = static_cast<std::uint32_t>(2 * sms);
  return {"w8a16_gemm_m16_streamk", 1, ctas,
          streamk_plan_stages(ctas, static_cast<std::uint32_t>(sms))};
}

M16Plan plan_without_pdl(std::uint32_t m, std::uint32_t n, std::uint32_t k, std::uint64_t sms,
                         bool narrow) {
  // Too few CTAs leave loads in flight, hence bandwidth, unused. Measured on an H200
  // (docs/performance.md, bench/results/): 128, 160 and 192 tiles run best split in two,
  // 224 and more unsplit, so the threshold sits at 1.6 CTAs per SM.
  const std::uint64_t tiles = div_ceil(n, W8A16_GEMM_M16_N_TILE);
  // Stream-K gives every SM the same weight bytes, whatever the tile count. By the bench
  // at cb9c563 (split tiles added up from flagged partials) it is the fastest entry on
  // every layer of 64 MiB or more at m = 1, 8 and 16 (on which grid: large_layer_streamk).
  // Below that, on one CTA per SM, by a sweep over m = 1..8 at 5b66a05: from 32 MiB at
  // m >= 2 (Qwen3-32B qkv m = 6 19.46 us against 23.28 for the seed's entry, DeepSeek-V3
  // q_b 15.45 against 18.75) and at m = 1 where the seed's tiles leave SMs without a CTA
  // (Llama-3-8B down 21.0 us against 21.9 for split-K); from 20 MiB at m >= 5 (Llama-3-8B
  // qkv m = 6 12.36 us against 12.82 for split-K, which stays ahead up to m = 4).
  const std::uint64_t weight_bytes = std::uint64_t{n} * k;
  if (weight_bytes >= kLargeLayerBytes) {
    return large_layer_streamk(m, n, k, sms, narrow, false);
  }
  if ((weight_bytes >= 32 * kMiB && (m >= 2 || tiles < sms)) ||
      (weight_bytes >= 20 * kMiB && m >= 5)) {
    return {"w8a16_gemm_m16_streamk", 1, static_cast<std::uint32_t>(sms)};
  }
  const std::uint64_t stream_tiles = div_ceil(n, 128);
  // The streaming entry wins on wide layers (N >= 7168, its 128-row tiles) where a
  // split gives 1.5 to 2 of its CTAs per SM, one wave at full occupancy, with at least
  // 8 K blocks per CTA: Llama-3-8B gate_up (224 tiles), DeepSeek-V3 o and down (56
  // tiles x 4). With more CTAs a second wave runs half empty; with fewer, SMs idle.
  if (n >= 7168) {
    for (std::uint32_t s = 1; s <= W8A16_GEMM_M16_SPLITK_MAX; s *= 2) {
      const std::uint64_t ctas = stream_tiles * s;
      if (ctas >= sms * 3 / 2 && ctas <= sms * 2 && k / 128 / s >= 8) {
        return {"w8a16_gemm_m16_stream", s};
      }
    }
  }
  // Above 8 tokens a 32-row tile re-reads as many activation bytes as it streams weight
  // bytes; the 64-wide tile halves that, and wins once its tiles still cover the SMs
  // 1.2 times over (Llama-3-8B, Qwen3-32B and DeepSeek-V3 gate_up, Qwen3-32B qkv).
  if (m > 8 && div_ceil(n, W8A16_GEMM_M16_N_TILE_WIDE) >= sms * 6 / 5) {
    return {"w8a16_gemm_m16_n64", 1};
  }
  if (tiles >= sms * 8 / 5) return {"w8a16_gemm_m16", 1};
  // Each warp should get at least two K blocks (DeepSeek-V3 q_a: 4 beats 8), unless even
  // that split leaves SMs without a CTA (kv_a: 18 tiles, 8 beats 4).
  std::uint32_t max_split = std::clamp<std::uint32_t>(k / 1024, 1, W8A16_GEMM_M16_SPLITK_MAX);
  if (tiles * max_split < sms) {
    max_split = std::clamp<std::uint32_t>(k / 512, 1, W8A16_GEMM_M16_SPLITK_MAX);
  }
  std::uint32_t split = 1;
  while (split * 2 <= max_split && tiles * split < sms * 8 / 5) split *= 2;
  if (split == 1) return {"w8a16_gemm_m16", 1};
  return {"w8a16_gemm_m16_splitk", split};
}

// Measured on an H200 over m = 1..8, 12, 16 against every other entry, with and without
// PDL, on 10 layers of 2 to 56 MiB (docs/performance.md): the skinny entry on 8 warps
// took 0.72-0.81x the best other entry's time on DeepSeek-V3 kv_a and q_a up to 8 tokens
// (0.74-0.94x at 12 and 16), 0.85-0.98x on Llama-3-8B o and 0.75-0.93x on 16384 x 1024
// and 2048 x 8192 at every m, and 0.88-0.96x on Llama-3-8B qkv (24 MiB) up to 8 tokens;
// at 12 and 16 tokens one 16 MiB layer (8192 x 2048) lost by 2 and 9 %. With PDL it kept
// 0.70-0.87x below 16 MiB and 0.87-0.98x on 16 MiB layers with K >= 4096, but lost to
// stream-K with PDL on 8192 x 2048 (1.05-1.27x) and on Llama-3-8B qkv (1.02-1.09x).
// Below one full chunk of K (1024) most of its warps would idle: not measured, not picked.
// At one token without PDL it also led on the layers of 32-64 MiB with K >= 4096 in the
// record at ec9d6d2 (Llama-3-8B down 19.48 us against 21.03 for stream-K, Qwen3-32B qkv
// 17.31 against 18.44), not on DeepSeek-V3 q_b (K = 1536: 14.46 against 14.21).
bool skinny_suits(std::uint32_t m, std::uint32_t n, std::uint32_t k, bool pdl) {
  const std::uint64_t bytes = std::uint64_t{n} * k;
  if (k < 1024) return false;
  if (bytes < 16 * kMiB) return true;
  // From 16 MiB, what the deep entry leaves (deep_form_if_suited comes first): K of 1024
  // up to 1536, CTAs that fill under half the slots, and with PDL those that do not fit at
  // once or fill under two thirds.
  if (pdl) return bytes <= 16 * kMiB && k >= 4096;
  return bytes <= 16 * kMiB || (bytes <= 24 * kMiB && m <= 8);
}

// Measured on an H200 at m = 1, 8 and 16 (docs/performance.md, item 66), the skinny
// entry's chunks as one cluster, their partials through chunk 0's shared memory: with PDL
// 0.85-0.92x the time of the handoff through L2 on DeepSeek-V3 kv_a on 8 warps (252 CTAs,
// all on the device at once), 1.09-1.38x on q_a (672 CTAs, more than its 528 or 396
// slots), 1.17-1.31x on 2048 x 8192; without PDL 1.04-1.34x on those layers and
// 0.98-1.16x on kv_a (a cluster launch starts later, which PDL hides). Hence with PDL,
// and only where every CTA fits at once. Item 92 (m = 1, 4 and 8, with PDL): it gained on
// layers of 7 chunks (K = 7168; kv_a 0.84-0.93x, 1024 x 7168 0.92-0.93x) and lost on those
// of 4 and 5 whose CTAs fit too (2048 x 4096, 512 CTAs, 1.17-1.19x; 1536 x 5120, 480,
// 1.20-1.22x): clusters of 7 chunks and more. Item 161 (m = 1..8, with PDL): what decides
// it up to 8 tokens is how full the slots are, not the chunks: on 4 and 6 chunks filling
// 79-85 % of the 528 slots (1664 x 4096, 1152 and 1200 x 6144) the cluster took 0.89-0.92x
// the time of the chunks through L2, and on 7 and 8 filling 90-97 % 1.00-1.19x (1088 and
// 1120 x 7168, 1024 x 8192), on 8 filling 88 % (928 x 8192) 0.92-1.02x: up to 8 tokens
// clusters of 4 chunks and more on at most 90 % of the slots (below 75 % the grid is
// spread instead).
bool chunk_cluster_suits(std::uint32_t m, std::uint32_t n, std::uint32_t k, std::uint32_t sms) {
  const std::uint32_t chunks = w8a16_gemm_m16_skinny_chunks(k, W8A16_GEMM_M16_SKINNY_WARPS, 1);
  const std::uint64_t ctas = std::uint64_t{div_ceil(n, 16)} * chunks;
  const std::uint64_t slots =
      std::uint64_t{sms} * w8a16_gemm_m16_skinny_ctas_per_sm(m, W8A16_GEMM_M16_SKINNY_WARPS);
  const bool measured = m <= 8 ? chunks >= 4 && 10 * ctas <= 9 * slots : chunks >= 7;
  return measured && chunks <= W8A16_GEMM_M16_SKINNY_MAX_CLUSTER_CHUNKS && ctas <= slots;
}

// Stream-K on two CTAs per SM with 3 stages, with PDL up to 8 tokens:
// - where shallow_layer_warps gives 4 warps of 3 blocks (K = 1536) on up to 36 MiB. Item
//   110 (m = 1..8, two runs; after the ring's position became counters, item 109): it took
//   0.931-0.959x the 4-warp form's time on 20480 rows, 0.942-0.993x on 22528 and
//   0.940-0.995x on 24576 (q_b), but 0.993-1.047x on 26624, 1.018-1.069x on 28672 and
//   1.023-1.086x on 32768;
// - with K of 640-896 under 64 MiB where no form of the deep entry fits at once (above
//   33792 rows), which would run on one CTA per SM. Item 121 (item 119's two probe runs, 6
//   layers of 36864-53248 rows, m = 1, 4 and 8): 0.952-0.992x one CTA per SM's time, and
//   0.959-0.995x on 6 other layers checked after; where the deep CTAs fit (up to 28672
//   rows) one per SM led by up to 25 %, and above 8 tokens it led on 3 of 6 layers.
// And stream-K on one CTA per SM with PDL up to 8 tokens at K = 640 from 8 MiB where the
// deep form has 4 warps, whose 5 blocks would split 2, 1, 1, 1 (item 127: 0.93-0.99x the
// deep entry's time on 13312 and 16384 rows in item 124's runs, 0.94-1.03x on 13824, 14336
// and 15360 rows checked after).
// `form`: w8a16_gemm_m16_skinny_deep_form of the shape.
std::optional<M16Plan> shallow_streamk_if_suited(std::uint32_t m, std::uint32_t n,
                                                 std::uint32_t k, std::uint32_t sms, bool pdl,
                                                 const SkinnyDeepForm& form) {
  const M16Plan two_per_sm{"w8a16_gemm_m16_streamk", 1, 2 * sms,
                           streamk_plan_stages(2 * sms, sms)};
  const std::uint64_t bytes = std::uint64_t{n} * k;
  if (shallow_layer_warps(m, n, k, pdl, form) && k == 1536 && bytes <= 36 * kMiB) {
    return two_per_sm;
  }
  if (pdl && m <= 8 && k >= 640 && k < 1024 && bytes < kLargeLayerBytes &&
      div_ceil(n, 16) > std::uint64_t{sms} * form.ctas_per_sm) {
    return two_per_sm;
  }
  if (pdl && m <= 8 && k == 640 && bytes >= 8 * kMiB && form.warps == 4) {
    return M16Plan{"w8a16_gemm_m16_streamk", 1, sms};
  }
  return std::nullopt;
}

// The skinny entry on one chunk of K below K = 1024, on layers of 8-32 MiB, where the deep
// entry's form would run 4 warps of one or two blocks, which the skinny kernel's warps
// request all at once:
// - K = 512 up to 8 tokens, with or without PDL, on 4 warps (the deep form's 4 warps, or
//   its fallback in waves); above 8 tokens without PDL where no deep form fits at once
//   (stream-K on one CTA per SM otherwise);
// - K of 640-896 up to 8 tokens without PDL, where the deep form's 4-warp CTAs fit at once,
//   on 8 warps (at most one idles);
// - K = 896 up to 8 tokens where the deep form's 2-warp CTAs (4 and 3 blocks) fit at once,
//   on 8 warps; with PDL only where they fill under three quarters of the slots.
// Item 124 (one probe run, 10 layers of 12288-40960 x 512-896, m = 1, 4, 8 and 16): at K =
// 512 on 16384 and 40960 rows 0.88-0.96x the deep entry's time up to 8 tokens (0.89-0.94x
// with PDL, where 40960 rows at 8 tokens took stream-K, 0.94x); above 8 tokens 0.92-0.93x
// stream-K's on 32768 and 40960 rows without PDL (with PDL stream-K led by 13-15 %); at K
// of 640-896 on 12288 and 16384 rows 0.93-1.01x without PDL (with PDL the deep entry, spread
// or not, led by 4-9 %). Where the deep form has 2 warps (24576 and 32768 x 512, 20480 and
// 32768 x 896) the two entries came within 4 % of each other, and on 24576 x 768 the deep
// entry led by 7-8 %. On 11 other layers (16896-61440 x 512, 10240-16384 x 640-896, m = 1
// to 16) the changed choices took 0.86-1.02x their time without PDL, 0.87-0.95x with it.
// Item 126 (K = 896 on 2-warp forms; 20480 and 32768 rows in item 124's run, 18432-26624
// with PDL in the next, then 17920-31744 rows): without PDL 0.91-0.99x the deep entry's
// time on all six layers; with PDL 0.86-1.00x stream-K's or the deep entry's on 17920-22528
// rows (53-67 % of the slots), 0.96-0.99x on 26624 (79 %), 0.99x on 28672 (85 %) and
// 1.04-1.05x on 31744 (94 %). The C ABI's skinny function runs the same warps (4 at K =
// 512).
std::optional<M16Plan> shallow_skinny_if_suited(std::uint32_t m, std::uint32_t n,
                                                std::uint32_t k, std::uint32_t sms, bool pdl,
                                                const SkinnyDeepForm& form) {
  const std::uint64_t bytes = std::uint64_t{n} * k;
  if (bytes < 8 * kMiB || bytes > 32 * kMiB) return std::nullopt;
  const std::uint64_t groups = div_ceil(n, 16);
  const std::uint64_t slots = std::uint64_t{sms} * form.ctas_per_sm;
  const bool fits = groups <= slots;
  const M16Plan skinny{"w8a16_gemm_m16_skinny", 1, 0, 0, w8a16_gemm_m16_skinny_plan_warps(k)};
  if (form.warps == 2) {
    if (k == 896 && m <= 8 && fits && (!pdl || 4 * groups < 3 * slots)) return skinny;
    return std::nullopt;
  }
  if (form.warps != 4) return std::nullopt;
  if (k == 512 && (m <= 8 || (!pdl && !fits))) return skinny;
  if (k >= 640 && k <= 896 && m <= 8 && !pdl && fits) return skinny;
  return std::nullopt;
}

// Item 94 (the `probe` step, with PDL, m = 1, 8 and 16, 10 layers of 4-56 MiB): with PDL
// the next launch's CTAs start in the slots a launch leaves free, and a skinny or deep grid
// that fills only part of its slots took 0.74-0.93x the time when each CTA asked for enough
// shared memory that an SM held at most ceil(CTAs / SMs) of them: kv_a's skinny entry (252
// CTAs, 2 per SM where registers allow 4) 2.76 / 3.06 / 3.85 us against 3.75 / 3.76 / 4.25,
// q_a's deep kernel in chunks (384, 3 where 4) 0.93x, Llama-3-8B qkv's deep entry on 8
// warps (384, 3 where 4) 0.91-0.94x, Qwen3-32B qkv's on 4 (640, 5 where 8) 0.81-0.82x. Where
// the share equals what the registers allow it changed nothing or lost (Llama-3-8B o on 16
// warps, 2048 x 7168 in chunks: 0.98-1.02x), and a share of 12 (q_b's 1536 CTAs of 2 warps)
// lost 1.23-1.28x. kv_a's chunks spread took 0.88-0.97x the time of its chunks as a cluster.
// Hence with PDL, for shares of 2 to 5 below what the registers allow, instead of a cluster.
// Item 119 (one probe run, m = 1, 4 and 8, with PDL): a share of 6 paid too, the deep
// entry's 4-warp CTAs spread 0.89-0.96x the time unspread on 10880-12288 x 3584-5120
// (680-768 CTAs) and 0.88-0.95x on 11264 x 1024 (704); shares of 7 and 8 lost 1.21-1.30x
// (13312-15360 x 1024, 832-960 CTAs).
M16Plan spread_if_suited(M16Plan plan, std::uint32_t m, std::uint32_t n, std::uint32_t k,
                         std::uint32_t sms, bool pdl) {
  if (!pdl || !plan.entry.starts_with("w8a16_gemm_m16_skinny")) return plan;
  const std::uint64_t ctas =
      w8a16_gemm_m16_skinny_grid_ctas(plan.entry, n, k, plan.warps, plan.warp_blocks);
  std::uint32_t by_registers = 0;
  if (plan.entry == "w8a16_gemm_m16_skinny") {
    by_registers = w8a16_gemm_m16_skinny_ctas_per_sm(m, plan.warps);
  } else if (plan.entry == "w8a16_gemm_m16_skinny_deep") {
    by_registers = w8a16_gemm_m16_skinny_deep_ctas_per_sm(m, plan.warps);
  } else if (plan.entry == "w8a16_gemm_m16_skinny_deep3") {
    by_registers = w8a16_gemm_m16_skinny_deep3_ctas_per_sm(m, plan.warps);
  } else if (plan.entry == "w8a16_gemm_m16_skinny_deep32") {
    by_registers = w8a16_gemm_m16_skinny_deep32_ctas_per_sm(plan.warps);
  }
  // The deep entry's CTAs, one per SM where the registers allow two (items 160 and 161, 16
  // warps, m = 1..8: 0.73-1.02x the time unspread on 19 layers of 48-128 CTAs, 0.86-0.92x
  // on the 119-128 at K = 4096 where the plan takes it).
  const bool one_per_sm =
      plan.entry == "w8a16_gemm_m16_skinny_deep" && ctas <= sms && by_registers >= 2;
  if (!spreadable(ctas, sms, by_registers) && !one_per_sm) return plan;
  plan.max_ctas_per_sm = static_cast<std::uint32_t>((ctas + sms - 1) / sms);
  plan.chunk_cluster = false;
  return plan;
}

// Without PDL on narrow DRAM bandwidth per SM (an H100, item 189), under 64 MiB, the
// 16-row form on 8 warps instead of the 32-row form on 16 (at most one CTA per SM:
// 3361-4224 rows, K from 12288) where the 16-row form's CTAs fit at once: on the H100 the
// 32-row form took 1.010-1.049x its time at 12 and 16 tokens (4096 x 12288, Llama-3-8B
// down, 3584 x 14336: 48-56 MiB); held out (the set dram8b, 9, 12 and 16 tokens, two
// runs) the 16-row form took 0.946-0.985x the 32-row form's time on six layers of 43-64
// MiB (4096 x 16384, 64 MiB, among them, left to the 32-row form by the bound),
// 1.004-1.011x on 3584 x 18944 and 4096 x 28672 (65 and 112 MiB). On an H200 the
// 32-row form took 0.955x the 16-row form's time (Llama-3-8B down at 16 tokens, record
// h200-6ae6ca5). With PDL the H100 gave 0.968-1.043x, no rule.
SkinnyDeepForm deep16_for_deep32_on_narrow_dram(const SkinnyDeepForm& deep32,
                                                const SkinnyDeepForm& form, std::uint64_t bytes,
                                                bool narrow, bool pdl) {
  const bool swap = narrow && !pdl && bytes < kLargeLayerBytes && deep32.warps == 16 &&
                    form.kernel == "w8a16_gemm_m16_skinny_deep" && form.warps == 8;
  return swap ? form : deep32;
}

// The deep entry's one chunk of K in `form`: every warp's blocks in turn, no workspace.
M16Plan one_chunk(const SkinnyDeepForm& form, std::uint32_t k) {
  return {form.kernel, 1, 0, 0, form.warps,
          w8a16_gemm_m16_skinny_deep_one_chunk_blocks(k, form.warps)};
}

M16Plan plan_entry(std::uint32_t m, std::uint32_t n, std::uint32_t k, std::uint32_t sms,
                   std::uint32_t dram_gbps, M16LaunchOptions launch, bool deep_chunks) {
  const bool narrow = narrow_dram(dram_gbps, sms);
  // The deep entry's one-chunk form, which the rules below size their grids by.
  const SkinnyDeepForm form = w8a16_gemm_m16_skinny_deep_form(m, n, sms);
  if (const std::optional<SkinnyDeepForm> deep32 =
          w8a16_gemm_m16_skinny_deep32_form(m, n, k, sms, launch.programmatic_dependent)) {
    return one_chunk(deep16_for_deep32_on_narrow_dram(*deep32, form, std::uint64_t{n} * k,
                                                      narrow, launch.programmatic_dependent),
                     k);
  }
  if (const std::optional<M16Plan> streamk =
          shallow_streamk_if_suited(m, n, k, sms, launch.programmatic_dependent, form)) {
    return *streamk;
  }
  if (const std::optional<M16Plan> skinny =
          shallow_skinny_if_suited(m, n, k, sms, launch.programmatic_dependent, form)) {
    return *skinny;
  }
  if (deep_chunks) {
    if (const std::optional<M16Plan> chunked = chunked_deep_above_8_tokens(
            m, n, k, sms, launch.programmatic_dependent)) {
      return *chunked;
    }
    if (const std::optional<M16Plan> chunked = chunked_deep_without_pdl_if_suited(
            m, n, k, sms, launch.programmatic_dependent, form)) {
      return *chunked;
    }
    if (const std::optional<M16Plan> chunked = chunked_deep_narrow_with_pdl_if_suited(
            m, n, k, sms, launch.programmatic_dependent, form)) {
      return *chunked;
    }
  }
  if (const std::optional<SkinnyDeepForm> deep =
          deep_form_if_suited(m, n, k, sms, launch.programmatic_dependent, form)) {
    return one_chunk(*deep, k);
  }
  if (const std::optional<SkinnyDeepForm> deep = deep_form_on_narrow_dram(
          m, n, k, sms, narrow, launch.programmatic_dependent, form)) {
    return one_chunk(*deep, k);
  }
  if (const std::optional<M16Plan> chunked =
          chunked_deep_if_suited(m, n, k, sms, launch.programmatic_dependent)) {
    return *chunked;
  }
  if (skinny_suits(m, n, k, launch.programmatic_dependent)) {
    M16Plan plan{"w8a16_gemm_m16_skinny", 1, 0, 0, w8a16_gemm_m16_skinny_plan_warps(k)};
    plan.chunk_cluster = launch.programmatic_dependent && chunk_cluster_suits(m, n, k, sms);
    return plan;
  }
  const M16Plan plan = plan_without_pdl(m, n, k, sms, narrow);
  const std::uint64_t bytes = std::uint64_t{n} * k;
  const bool tiled = plan.entry == "w8a16_gemm_m16" || plan.entry == "w8a16_gemm_m16_n64" ||
                     plan.entry == "w8a16_gemm_m16_splitk";
  // Where the tiled entries would run, stream-K on one CTA per SM instead:
  // - K of 512-896 from 8 MiB, with or without PDL (item 118): the seed's tiles are 4-7 K
  //   blocks deep (above 8 tokens, the deep entry's CTAs not fitting at once). 32768 x 512
  //   at 16 tokens 10.22 us against 13.84 for the 64-wide tile; with PDL 16384 x 512 and x
  //   896 at 16 tokens 4.85 and 6.93 against 8.65 and 11.54 for split-K / 1.
  // - With PDL from 16 MiB at 4 to 8 tokens (the sweep of the comment below: Llama-3-8B o
  //   m = 6 8.54 us against 9.44 for split-K / 2 with PDL, Llama-3-8B qkv m = 4 9.85
  //   against 10.52); above 8 tokens its 16-token build falls behind again (o m = 9: 10.94
  //   against 10.25); but not at K = 1024, where the tiled entries' CTAs get 8 K blocks
  //   each (item 113: 16384 x 1024 at 9, 12 and 16 tokens, 7.43-7.51 us against
  //   10.97-11.67 for split-K on one CTA per tile, the fastest entry).
  // The tiled entries never run from 64 MiB (large_layer_streamk).
  const bool shallow_k = k >= 512 && k < 1024 && bytes >= 8 * kMiB;
  const bool pdl_streamk = launch.programmatic_dependent && bytes >= 16 * kMiB && m >= 4 &&
                           (m <= 8 || k == 1024);
  if (tiled && (shallow_k || pdl_streamk)) return {"w8a16_gemm_m16_streamk", 1, sms};
  if (!launch.programmatic_dependent) return plan;
  // Measured with every entry's PDL form in one run (bench/results/h200-df65562.json):
  // split-K on one CTA per tile with PDL beat the seed's launch by 11-12 % where the plan
  // above picks it (Qwen3-32B qkv 16.22 against 18.47 us, DeepSeek-V3 q_b 12.76 against
  // 14.40 at m = 1). Stream-K keeps its grid under 64 MiB: at cb9c563 its PDL form ran
  // fastest on the grid the plan above picks in 26 of the 27 cases where it picks one
  // (Llama-3-8B down 19.3 us at m = 1 on one CTA per SM against 20.3 on two; the
  // exception, DeepSeek-V3 q_b at m = 8, 13.1 against 12.8). From 64 MiB the grid is
  // large_layer_streamk's with PDL.
  if (bytes >= kLargeLayerBytes) return large_layer_streamk(m, n, k, sms, narrow, true);
  if (plan.entry == "w8a16_gemm_m16" || plan.entry == "w8a16_gemm_m16_n64") {
    return {"w8a16_gemm_m16_splitk", 1};
  }
  return plan;
}

}  // namespace

M16Plan plan_m16_gemm(std::uint32_t m, std::uint32_t n, std::uint32_t k, M16PlanDevice device,
                      M16LaunchOptions launch) {
  const std::uint32_t sms = device.sm_count == 0 ? 132 : device.sm_count;
  return spread_if_suited(plan_entry(m, n, k, sms, device.dram_gbps, launch, true), m, n, k,
                          sms, launch.programmatic_dependent);
}

M16Plan plan_m16_gemm_one_chunk_deep(std::uint32_t m, std::uint32_t n, std::uint32_t k,
                                     M16PlanDevice device) {
  const std::uint32_t sms = device.sm_count == 0 ? 132 : device.sm_count;
  return plan_entry(m, n, k, sms, device.dram_gbps, {}, false);
}

}  // namespace metrale
