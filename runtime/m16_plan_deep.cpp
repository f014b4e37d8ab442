#include "m16_plan_deep.hpp"

#include "m16_plan_chunks.hpp"
#include "metrale/kernel_launch.hpp"
#include "metrale/w8a16_gemm_m16_skinny.hpp"

namespace metrale::m16_plan {

// Whether a PDL launch of `ctas` CTAs, of which the registers let an SM hold
// `by_registers`, is spread over the SMs (spread_if_suited, items 94 and 119): an even
// share of 2 to 6 CTAs per SM, below what the registers allow.
bool spreadable(std::uint64_t ctas, std::uint32_t sms, std::uint32_t by_registers) {
  const std::uint64_t share = (ctas + sms - 1) / sms;
  return share >= 2 && share <= 6 && share < by_registers;
}

// The depths of K the deep entry was measured on: 1536 and more, and 512-1024 on layers
// of up to 32 MiB, or of up to 48 MiB up to 8 tokens (with PDL up to 6). Item 112 (one probe
// run, m = 1, 4 and 8, with and without PDL, 16384-32768 rows of K = 1024, where the plan
// took the skinny, streaming, split-K or stream-K entry): the form
// w8a16_gemm_m16_skinny_deep_form gives took 0.80-0.99x the plan's choice without PDL
// (28672 x 1024 10.05 us against 12.39 for the streaming entry at m = 1) and was the
// fastest entry in each case; with PDL, on 4 warps (shallow_layer_warps), 0.66-0.97x, but
// on 20480 rows 0.92-1.01x, where the skinny entry led it by 2-5 %. Item 113 (a fitting
// probe run, m = 1, 4, 8, 9, 12, 16, and a second run on other rows and token counts):
// above 8 tokens the rules below take its form where its CTAs all fit at once, 2 warps of
// 4 blocks on 16384-20480 rows without PDL (20480 with PDL too; 0.58-0.95x the old choice,
// the fastest entry in every case) and the three-per-SM form's 2 warps on 24576 rows
// (0.87-0.97x, the fastest); on 36864-49152 rows (2304-3072 CTAs, more than fit at once)
// the form's fallback, 4 warps of 2 blocks each, took 0.86-0.98x the old choice (the
// seed's entry at one token, stream-K on one CTA per SM from 2) without PDL, within 2.4 %
// of the fastest entry, and with PDL 0.87-0.99x up to 6 tokens; at 8 tokens with PDL it
// took 1.02-1.03x stream-K on one CTA per SM on 36864-40960 rows. Item 118 (two probe
// runs, 9 layers of 8-32 MiB with K of 512, 640, 768 and 896, m = 1, 8 and 16; the rules
// of K = 1024 fitted on both): the plan's choice took 1.02-1.03x the fastest entry
// (geometric mean; worst 1.12x with PDL up to 8 tokens on 16384 x 512, where the skinny
// entry on 4 warps, which the plan does not run, led, and on 65536 x 512) against
// 1.20-1.36x (worst 1.81x) for the seed's entries and split-K before.
bool deep_depth_measured(std::uint32_t m, std::uint32_t k, std::uint64_t bytes, bool pdl) {
  return k >= 1536 ||
         (k >= 512 && k <= 1024 &&
          (bytes <= 32 * kMiB || (bytes <= 48 * kMiB && m <= (pdl ? 6u : 8u))));
}

// With PDL up to 8 tokens on layers of 16-64 MiB (deep_depth_measured), where only the
// deep entry's CTAs of 2 warps fit at once (over 1056 row groups on 132 SMs): the warps
// that get 2 or 3 blocks each, 8 or 4, else none. Such CTAs ran faster than the 2-warp
// form, in more than one wave (item 105: with PDL, m = 1, 4 and 8). At K = 1536 (12
// blocks) 4 warps took 0.92-0.98x the 2-warp form's time on 22528, 24576 (q_b) and 26624
// rows, 0.98-1.02x on 28672 and 0.99-1.03x on 32768; 8 warps, on 1.5 blocks, 0.94-1.20x.
// At K = 2048 (16 blocks) 8 warps took 0.90-0.92x on 24576 rows (4 warps 0.94-0.97x). On
// 20480 rows, whose 2-warp CTAs fill 61 % of the slots, so that the plan took split-K or
// stream-K, 0.97-1.01x (K = 1536) and 0.91-0.96x (K = 2048) that choice's time.
// `form`: w8a16_gemm_m16_skinny_deep_form of the shape.
std::optional<std::uint32_t> shallow_layer_warps(std::uint32_t m, std::uint32_t n,
                                                 std::uint32_t k, bool pdl,
                                                 const SkinnyDeepForm& form) {
  const std::uint64_t bytes = std::uint64_t{n} * k;
  if (!pdl || m > 8 || !deep_depth_measured(m, k, bytes, pdl) || bytes < 16 * kMiB ||
      bytes >= kLargeLayerBytes || form.warps != 2) {
    return std::nullopt;
  }
  const std::uint32_t blocks = k / 128;
  for (const std::uint32_t warps : {8u, 4u}) {
    if (blocks == 2 * warps || blocks == 3 * warps) return warps;
  }
  return std::nullopt;
}

// Without PDL, where the deep entry on one chunk runs from 9 tokens on layers under 16 MiB:
// where its CTAs fill more than two thirds of the slots at K of 5632-6144, or on CTAs of 8
// warps at K of 5120-6144. Items 169 and 170 (without PDL at 9 and 10 tokens, 15 layers of
// 1408-3200 x 4608-7680): it led the skinny entry by 1.2-3.8 % on every layer of 89-104 CTAs
// of 16 warps at K of 5632-6144 (whose warps take 2.75-3 blocks each) and by 5-12 % on the
// 8-warp layers of 184-200 CTAs at K of 5120-5632, and trailed at K = 4608 (0.5-2 %), at
// K of 6656 and more (0.6-3.6 %) and on 16 warps at K = 5120 below 100 CTAs (up to 3.4 %).
// Held out (item 171: m = 9, 10 and 12, 12 layers of 1440-3136 x 5120-6144): 0.897-1.000x the
// skinny entry's time, median 0.970; at 69 % on 8 warps at first, but 182 CTAs (68.9 %) led
// by 7.5-11 % there, and held out below 69 % (item 172: 177-181 CTAs at K of 5120 and 5376,
// 5 layers) 0.905-0.973x, median 0.944. (On 8 warps at K other than 4096 and 5120 the deep
// entry's chunks of 4 warps come first, chunked_deep_above_8_tokens.)
namespace {
bool one_chunk_from_9_without_pdl(std::uint32_t k, std::uint64_t ctas, std::uint64_t slots,
                                  const SkinnyDeepForm& form) {
  return k <= 6144 && 3 * ctas > 2 * slots && (k >= 5632 || (form.warps == 8 && k >= 5120));
}

// With PDL up to 8 tokens under 16 MiB at K of 1152-3584, on 16 warps: where the one-chunk
// form's CTAs outnumber the SMs and fit at once (133-264 row groups on 132 SMs), and at K of
// 3200-3584 from five sixths of the SMs (110 groups, one CTA per SM: spread_if_suited),
// below the two thirds of the slots the other rules ask. Item 183, on an H100: at K = 3584
// (three plancheck runs, m = 1, 2, 4, 6, 8, against ten PDL forms of the skinny and deep
// entries) on 144-168 groups 0.79-0.81x the time of the skinny entry on 8 warps, the plan's
// choice before, fitted on 2304 and 2432 rows, held out on 2368 and 2688; under 8 MiB (two
// runs, 16 layers of 1792-3584 x 2048-3584) on 136-224 groups 0.77-0.94x the skinny entry's
// time, and at K = 3584 on 112 and 128 groups, spread, 0.81-0.95x; at K of 2560 and 3072 on
// 112 and 128 groups the skinny entry spread led or tied (1.00-1.08x), so not there; held
// out on 15 layers of 120-240 groups (set below8b), within 2 % of the fastest PDL entry in
// 71 of 75 cases. Its bounds (item 184, set below8c, two runs on the H100): at K of
// 1536-1920 on 136-240 groups the one-chunk form within 1.4 % of the fastest PDL entry in
// every case, 0.82-0.97x the time of the skinny entry, the plan's choice before; at K = 3328
// on 128 groups spread 0.83-0.88x; at K of 2048, 2304, 2560 and 2816 on 112-128 groups the
// skinny entry spread led (the one-chunk form spread 1.04-1.09x). Item 184 held out (set
// below8d, two runs): on 11 layers inside its bounds within 2 % of the fastest PDL entry in
// 48 of 55 cases (the skinny entry before: 1.064-1.288x the new choices' time, in none);
// just past them (item 185), on 2048 x 3200 and 2560 x 1408 the one-chunk form led the
// skinny entry by 1.11-1.18x, so K from 1408 and the five sixths from 3200. Below (item 187,
// set below8f on an H100, two runs): at K of 1152 and 1280 (9 and 10 blocks) on 136-240
// groups the one-chunk form, spread or not, the fastest PDL entry in every case, the plan's
// choice before (the skinny entry on 8 warps) 1.09-1.24x its time, and on an H200 2560 x
// 1280 1.13-1.17x (item 186); at K = 1024 (8 blocks: half the 16 warps idle) the skinny
// entry spread led it by 3-11 %. So K from 1152; held out on 4 other layers (set below8g).
// The rule has its own bounds of K, so it comes before deep_depth_measured (which starts at
// 1536).
bool one_chunk_with_pdl_below_4096(std::uint32_t m, std::uint32_t k, std::uint64_t bytes,
                                   std::uint64_t ctas, std::uint64_t slots, std::uint32_t sms,
                                   const SkinnyDeepForm& form) {
  if (m > 8 || k < 1152 || k > 3584 || bytes >= 16 * kMiB || form.warps != 16 || ctas > slots) {
    return false;
  }
  return ctas > sms || (k >= 3200 && 6 * ctas >= 5 * std::uint64_t{sms});
}
}  // namespace

// Measured on an H200 over m = 1, 2, 4, 8, 9, 12 and 16 against every other entry, with
// and without PDL, on the 13 layers of the benchmark and four more (docs/performance.md,
// item 58): the deep kernel on one chunk of K, on the warps w8a16_gemm_m16_skinny_deep_form
// gives, took 0.77-0.96x the best other entry's time on Llama-3-8B qkv, o and down and
// Qwen3-32B qkv at every m, and 0.92-0.99x on DeepSeek-V3 q_b (K = 1536) up to 12 tokens
// (1.006x at 16); on the layers of 64 MiB and more 0.97-1.01x up to 8 tokens and 1.04-1.29x
// above, and on q_a and kv_a 1.02-1.77x. A grid that fills less than half of the device's
// CTA slots streams too little: on 2048 x 8192 (128 CTAs of 16 warps, 264 slots) it took
// 1.08-1.09x the skinny entry's time up to 8 tokens, and led above (128 of 132 slots).
// With PDL, where the next launch's CTAs start in the slots this one leaves, it led where
// its CTAs all fit at once and fill at least two thirds of the slots (Llama-3-8B o, down,
// qkv up to 8 tokens, Qwen3-32B qkv above 8, 8192 x 2048 above 8, 12288 x 2048 and
// 14336 x 4096 up to 8: 73-97 % of the slots, 0.76-0.95x) and lost elsewhere (Llama-3-8B
// qkv above 8 tokens and Qwen3-32B qkv up to 8: 58 and 61 %, 1.02-1.12x; q_b and the others
// that do not fit at once: 1.01-1.17x).
// Above 8 tokens the deep kernel's three-per-SM form (w8a16_gemm_m16_skinny_deep_form) makes
// Llama-3-8B qkv's 384 CTAs of 8 warps fit at once (97 % of 396 slots), and with PDL the
// rule above then takes it (9.61-9.97 us against 12.46-13.39 for the first form's 8 warps,
// docs/performance.md item 70).
// The deep kernel's form where it suits the shape.
std::optional<SkinnyDeepForm> deep_form_if_suited(std::uint32_t m, std::uint32_t n,
                                                  std::uint32_t k, std::uint32_t sms, bool pdl,
                                                  const SkinnyDeepForm& form) {
  const std::uint64_t bytes = std::uint64_t{n} * k;
  const std::uint64_t slots = std::uint64_t{sms} * form.ctas_per_sm;
  const std::uint64_t ctas = div_ceil(n, 16);
  if (pdl && one_chunk_with_pdl_below_4096(m, k, bytes, ctas, slots, sms, form)) return form;
  if (!deep_depth_measured(m, k, bytes, pdl)) return std::nullopt;
  // From 64 MiB only up to 8 tokens (above, the 32-row form or stream-K), where its CTAs
  // fit at once and fill two thirds of the slots (with PDL 80 %), on CTAs of 8 warps with
  // at most 12 blocks each (K up to 12288) or of 16 with at most 14 (K up to 28672), and
  // without PDL also of 4 with at most 12 (K up to 6144). Item 88 (the deep entry on 8
  // warps against stream-K on two CTAs per SM and 3 stages, m = 1, 4 and 8, 16 layers of
  // 64-224 MiB with N of 5632-8448, whose 352-528 CTAs all fit the 528 slots): without PDL
  // 0.87-1.00x its time where it filled two thirds with K up to 18432 (39 cases),
  // 1.00-1.04x elsewhere (K of 20480 and more); with PDL 0.91-1.00x where it filled 80 %
  // with K up to 16384 (24), 1.00-1.08x elsewhere. Since stream-K's ring position became
  // counters (item 109) its one-CTA-per-SM form leads on the deeper of those (item 110, m
  // = 1..8, two runs): the deep entry took 1.000-1.022x its time on 8192 x 14336,
  // 1.015-1.031x on DeepSeek-V3 o (K = 16384), 0.998-1.015x on DeepSeek-V3 down and
  // 1.044-1.048x on 6656 x 16384 (with PDL 0.997-1.006x, 1.013-1.026x, 1.004-1.011x and
  // 1.062-1.076x), and kept its lead on K up to 12288 (8192 x 8192, 5632 x 12288, 6144 x
  // 12288, 7168 x 10240). The same probes without PDL on the other forms: 4 warps took
  // 0.943-0.961x stream-K's time on 8-12 blocks per warp (16384 x 4096, 13824 x 5120,
  // 12288 x 6144; 73-97 % of the slots) and 0.991-1.034x on 16 (10240 x 8192, 9216 x 8192,
  // 14336 x 8192), 16 warps 0.938-0.991x on 10-14 blocks (3584 x 20480, 4096 x 16384 to x
  // 28672; 85-97 %), with PDL 0.937-0.979x. With PDL 4 warps took 1.013-1.117x (13824 x
  // 5120, 12288 x 6144).
  if (bytes >= kLargeLayerBytes) {
    const bool fills = pdl ? 5 * ctas >= 4 * slots : 3 * ctas >= 2 * slots;
    const bool measured = form.warps == 8 || form.warps == 16 || (!pdl && form.warps == 4);
    const std::uint32_t max_blocks = form.warps == 16 ? 14 : 12;
    if (m > 8 || !measured || ctas > slots || !fills || k / 128 > max_blocks * form.warps) {
      return std::nullopt;
    }
    return form;
  }
  // From 8 MiB under 16 MiB with K of 1536 up to 3584, of 512-896, and at K = 1024 above 8
  // tokens, the rules of 16-64 MiB further below (item 117, one probe run: 7168 x 2048 on the deep
  // kernel's 8 warps up to 8 tokens 0.83-0.86x the skinny entry's time, on 4 at 16 tokens
  // 0.77x; 4608 x 3584 1.01x at one token, 0.95x at 8 and on the three-per-SM form 0.85x
  // at 16; 8192 x 1024 at 16 tokens 0.87x; with PDL 0.77-0.92x; on 10 other layers of
  // 8-15 MiB, checked after, 0.66-1.00x in 88 changed choices of 100). At K = 1024 up to 8
  // tokens too where the form's CTAs have 4 warps of 2 blocks (item 119, one probe run, m =
  // 1-8: 9216-15360 x 1024 on 4 warps 0.92-0.95x the skinny entry's time, with PDL
  // 0.88-0.98x; on 8 warps of 1 block, 8192 rows, the skinny entry led, item 117).
  const bool shallow =
      bytes >= 8 * kMiB && ((k >= 1536 && k < 4096) || (k >= 512 && k < 1024) ||
                            (k == 1024 && (m > 8 || form.warps <= 4)));
  // Else under 16 MiB up to 8 tokens where small_layer_one_chunk_suits, and above 8 tokens with K
  // of 4096 and more where its CTAs fit at once: from 9 tokens where they fill 80 % of the slots;
  // without PDL from 9 where one_chunk_from_9_without_pdl (item 171); on 8 warps at K = 4096
  // from 9 where they fill 60 % (items 173 and 175: two runs each, m = 9, 12, 16, 140-192
  // groups; 0.85-0.97x the skinny entry's time from 160 groups without PDL, 0.84-0.97x
  // with it; 1.03-1.05x on 140);
  // with PDL from 9 where they fill two thirds with K of 4608-6144 (item 170), else where they fill
  // 70 % from 12 tokens; without PDL where they fill 69 % (92 groups on 132 SMs) from 11 (item
  // 169); and two thirds from 14 (13 with PDL); with K of 5120 and more without PDL. Item 81 (the
  // deep kernel's loads filling 256 bytes of L2; m = 9..16, 16 layers of 1024-2048 x 4096-12288,
  // against the skinny entry on 8 warps, with and without PDL): the deep entry gains with m and
  // loses with fewer CTAs. 112-128 CTAs of 16 warps in 132 slots took 0.85-0.97x the skinny entry's
  // time from 9 tokens; 96-104 (73-79 %) lost up to 1.03x at 9-12 tokens without PDL and won from
  // 13 (0.89-1.00x, K of 5120 and more; K = 4096 lost 1.07-1.10x at every m), with PDL from 12
  // (0.86-0.99x); 88 (two thirds) lost 1.02x at 13 tokens without PDL and 1.01x at 12 with it, and
  // won at 16 (0.98x, 0.97x); 80 CTAs lost 1.02-1.11x and 64 1.14-1.20x everywhere. Item 169 (two
  // runs, m = 10-13, without PDL, 7 layers of 1472-1664 x 5120-7168, 92-104 groups): the deep entry
  // took 0.951-0.995x the skinny entry's time from 11 tokens, and at 10 0.97-1.01x. Item 170 (with
  // PDL, two runs, m = 9-11, 9 layers of 1408-3104 x 4608-6144, 88-104 CTAs of 16 warps and 184-194
  // of 8): 0.880-0.990x the skinny entry's time at 9-11 tokens (q_a, at K = 7168, 1.008x at 9
  // tokens); held out (7 layers of 1424-3008 x 4608-6144, 89-103 and 180-188 CTAs) 0.881-0.983x,
  // median 0.949.
  if (bytes < 16 * kMiB && !shallow) {
    if (m <= 8) {
      if (!small_layer_one_chunk_suits(m, n, k, sms, pdl, form)) return std::nullopt;
      return form;
    }
    std::uint32_t from = 0;  // the first token count that takes the deep entry
    const bool wide_k = pdl || k >= 5120;
    if (5 * ctas >= 4 * slots || (pdl && 3 * ctas >= 2 * slots && k >= 4608 && k <= 6144) ||
        (form.warps == 8 && k == 4096 && 5 * ctas >= 3 * slots) ||
        (!pdl && one_chunk_from_9_without_pdl(k, ctas, slots, form))) {
      from = 9;
    } else if (pdl && 10 * ctas >= 7 * slots) {
      from = 12;
    } else if (!pdl && 100 * ctas >= 69 * slots && wide_k) {
      from = 11;
    } else if (3 * ctas >= 2 * slots && wide_k) {
      from = pdl ? 13 : 14;
    }
    if (from == 0 || m < from || k < 4096 || ctas > slots) return std::nullopt;
    return form;
  }
  if (const std::optional<std::uint32_t> warps = shallow_layer_warps(m, n, k, pdl, form)) {
    return SkinnyDeepForm{form.kernel, *warps, w8a16_gemm_m16_skinny_deep_ctas_per_sm(m, *warps)};
  }
  // K of 512-1024 (deep_depth_measured, items 113 and 118) where no form fits every CTA at
  // once (at K = 1024 from 32 MiB): the form's fallback, 4 warps, runs in waves up to 8
  // tokens (with PDL 6); above, only a form whose CTAs all fit (on 32768 x 1024 the
  // fallback took 1.08-1.11x stream-K's time). Only where K's blocks split evenly over the
  // 4 warps (K of 512 and 1024): at K of 640 the fallback took 1.09-1.16x stream-K on one
  // CTA per SM without PDL and 1.22-1.24x with it (36864 and 53248 rows, item 119), so K of
  // 640-896 takes stream-K there.
  if (k <= 1024 && ctas > slots) {
    if (m > 8 || (pdl && m > 6) || k / 128 % 4 != 0) return std::nullopt;
    return form;
  }
  // With PDL, above 8 tokens CTAs of 2 warps need 90 % of the slots (item 70: DeepSeek-V3
  // q_b at 16 tokens, 1536 CTAs in 1584 slots, 13.86 us against 14.97 for stream-K on one
  // CTA per SM; 16384 x 2048 at 16 tokens, 1024 CTAs in 1320, 14.49 against 13.44). Up to 8
  // tokens two thirds do, as for the other forms (item 73: q_b's 1536 CTAs in 2112 slots,
  // 12.38-12.95 us at m = 1..8 against 12.90-14.66 for split-K / 1 and stream-K on one CTA
  // per SM, 1.02-1.16x).
  const bool two_warps_above_8 = form.warps == 2 && m > 8;
  const bool fills = two_warps_above_8 ? 10 * ctas >= 9 * slots : 3 * ctas >= 2 * slots;
  // With PDL a grid spread over the SMs fills them whatever its share of the slots (item
  // 94: Qwen3-32B qkv's 640 CTAs of 4 warps, 61 % of the slots, up to 8 tokens).
  // Without PDL, from 20 MiB (where stream-K on one CTA per SM takes the layer above 8
  // tokens, plan_without_pdl), CTAs of 2 warps above 8 tokens need those 90 % too (item
  // 156: 14336 x 4096, 896 CTAs in 1584 slots, 22.3-22.8 us at 10-16 tokens against
  // 20.6-20.8 for stream-K).
  const bool plain_fills = bytes < 20 * kMiB || !two_warps_above_8 || fills;
  const bool suits = pdl ? ctas <= slots && (fills || spreadable(ctas, sms, form.ctas_per_sm))
                         : 2 * ctas >= slots && plain_fills;
  // Above 14 tokens the three-per-SM form gives way to stream-K on one CTA per SM
  // (plan_without_pdl) where it fills under 90 % of its slots with K of 7168 and more (item
  // 158: 4608-5632 rows x 7168-12288 at 15 and 16 tokens, stream-K 0.87-0.99x its time with
  // and without PDL; at 12-14 tokens 0.93-1.08x; 5120 x 6144 1.01-1.03x and 6144 rows, 97 %
  // of the slots, 1.04-1.16x at 15 and 16).
  const bool deep3_gives_way = form.kernel == "w8a16_gemm_m16_skinny_deep3" &&
                               form.warps == 8 && m >= 15 && 10 * ctas < 9 * slots && k >= 7168;
  if (!suits || deep3_gives_way) return std::nullopt;
  return form;
}

bool narrow_dram(std::uint32_t dram_gbps, std::uint32_t sms) {
  return dram_gbps != 0 && dram_gbps < std::uint64_t{kNarrowDramGbpsPerSm} * sms;
}

// Item 188 (an H100 80GB HBM3, 132 SMs, 3352 GB/s by its memory clock and bus: 25 GB/s
// per SM; the default set twice at 1c47b8c, then the `plancheck` set `large` twice, 8
// layers of 64-448 MiB at m = 1, 4 and 8): where the plan ran stream-K there, the deep
// entry's one-chunk form took 0.960-0.997x its time wherever it had 4 warps or more and its
// CTAs fit at once (Qwen3-32B down, DeepSeek-V3 o and down, 8192 x 28672 and 4608 x 36864
// on 8 warps, 10240 x 8192 and 16384 x 16384 on 4); where none fits (1152 row groups and
// more) its CTAs of 8 warps in waves took 0.968-0.994x (Llama-3-8B, Qwen3-32B and
// DeepSeek-V3 gate_up, 57344 x 8192, 73728 x 4608), where the 4-warp fallback took
// 0.985-1.100x. Held out (the set `large2`, 10 layers of 70-256 MiB at m = 1, 2 and 6, this
// rule's plan timed): 0.95-0.97x on 5120 x 16384 and 16384 x 8192, in waves 0.97-0.99x on
// 24576 x 4096, 43008 x 5120 and 32768 x 8192, but 1.06-1.07x on 18432 x 7168, whose 1152
// CTAs fill 2.18 waves of 3: in waves now only where they fill 80 % of the waves' slots
// (3.39 of 4 on Llama-3-8B gate_up). Held out again (`large3`, 8 layers filling 2.06-4.24
// waves, m = 1, 4 and 8): the plan within 2 % of the fastest entry in 24 of 24 cases; on
// the four that fill under 80 % the waves took 0.99-1.06x stream-K's time, on the four above
// 0.97-1.01x. On an H200 (memory clock 3201 MHz by nvidia-smi, 6144-bit bus by its data
// sheet: 4917 GB/s, 37 GB/s per SM; a 5120-bit report would still give 4097) the same forms
// took 1.002-1.077x stream-K's time in the record h200-6ae6ca5 (the default set's six
// layers), so the rule asks for the bandwidth; the bound between the two cards' 25 and 37
// GB/s per SM is not measured. With PDL the fastest deep form took 0.972-1.095x the time of the
// plan's stream-K (median 0.999, 33 cases), no rule; above 8 tokens the 32-row form or
// stream-K.
std::optional<SkinnyDeepForm> deep_form_on_narrow_dram(std::uint32_t m, std::uint32_t n,
                                                       std::uint32_t k, std::uint32_t sms,
                                                       bool narrow, bool pdl,
                                                       const SkinnyDeepForm& form) {
  const std::uint64_t bytes = std::uint64_t{n} * k;
  if (!narrow || pdl || m > 8 || k < 4096 || bytes < kLargeLayerBytes) return std::nullopt;
  const std::uint64_t ctas = div_ceil(n, 16);
  if (form.warps >= 4 && ctas <= std::uint64_t{sms} * form.ctas_per_sm) return form;
  const SkinnyDeepForm waves{"w8a16_gemm_m16_skinny_deep", 8,
                             w8a16_gemm_m16_skinny_deep_ctas_per_sm(m, 8)};
  const std::uint64_t slots = std::uint64_t{sms} * waves.ctas_per_sm;
  const std::uint64_t wave_count = (ctas + slots - 1) / slots;
  if (5 * ctas < 4 * wave_count * slots) return std::nullopt;
  return waves;
}

}  // namespace metrale::m16_plan
