// The launch plan of the M16 GEMM: which entry, grid and configuration to run for a shape,
// a token count and a device (plan_m16_gemm), for callers that ask for the automatic
// choice; m16_plan_grid.hpp sizes a plan's grid and workspace, w8a16_gemm_m16_auto.hpp
// plans and launches in one call.
#pragma once

#include <cstdint>
#include <string_view>

#include "metrale/m16_launch_options.hpp"

namespace metrale {

// The device a plan is made for: its SMs (0: 132) and its peak DRAM bandwidth in GB/s (0:
// not known). An SM count alone converts to one whose bandwidth is not known, planned as
// the rules were fitted on an H200; plan_device (w8a16_gemm_m16_auto.hpp) reads both from a
// service's device.
struct M16PlanDevice {
  M16PlanDevice(std::uint32_t sms = 0, std::uint32_t gbps = 0) : sm_count(sms), dram_gbps(gbps) {}
  std::uint32_t sm_count;
  std::uint32_t dram_gbps;
};

// Which entry and split to run for m tokens on n x k on `device`, for callers that ask for
// the automatic choice (e.g. attention projections; the dense FFN keeps
// METRALE_FFN_M16_TC_NTILE). A pure function of its arguments: no GPU, no compile, the
// same plan on every call; `metrale plan` prints it for any shape, and m16_plan_grid
// (m16_plan_grid.hpp) gives its launch's CTAs and workspace bytes.
//
// The rules, in the order plan_entry (runtime/m16_plan.cpp) tries them, the first that
// suits the shape deciding; each rule's definition there, in runtime/m16_plan_deep.cpp or
// in runtime/m16_plan_chunks.cpp carries its thresholds and the measurements behind them,
// docs/performance.md the items they name:
//  - above 8 tokens, the deep skinny entry's 32-row form (w8a16_gemm_m16_skinny_deep32_form),
//    or without PDL under 64 MiB on a device of under 31 GB/s per SM, where that form has
//    16 warps, its 16-row form on 8;
//  - shallow K (512-1536) where the deep entry's form is narrow: stream-K on one or two
//    CTAs per SM, or the skinny entry on one chunk of K;
//  - narrow, deep layers under 64 MiB (K of 8192 and more, tens of row groups up to about
//    one per SM), without PDL small ones up to 8 tokens at K of 4096, 5376, 6144 or 7168
//    (5376 on 7 warps, 7168 on 7 or 14), and above 8 tokens layers of more row groups than
//    SMs at K of 4608-8191 (not 5120): the deep skinny entry in chunks of K on 4, 7, 8 or 14
//    warps (the caller's workspace);
//  - layers of 16-64 MiB, and smaller or larger ones whose CTAs fill the device (with PDL
//    up to 8 tokens, small layers at K of 1152-3584 on more row groups than SMs): the deep
//    skinny entry on one chunk of K (_deep, _deep3 or _deep32 as
//    w8a16_gemm_m16_skinny_deep_form says), no workspace; then with PDL, small layers up to
//    8 tokens: its chunks of 8 warps of 2 blocks;
//  - small layers (under 16 MiB, some to 64 MiB): the skinny entry on 8 warps (4 at K =
//    512), the caller's workspace;
//  - without PDL up to 8 tokens on a device of under 31 GB/s of DRAM bandwidth per SM (an
//    H100, not an H200), layers of 64 MiB and more with K of 4096 and more: the deep skinny
//    entry on one chunk of K, its CTAs of 8 warps in waves where no form of 4 warps or
//    more fits at once (where those waves are 80 % full);
//  - layers of 64 MiB and more: stream-K on one or two CTAs per SM (the caller's
//    workspace; without PDL on under 31 GB/s per SM, one above 8 tokens on the bound of
//    up to 8 tokens), and on one from 20-32 MiB at a few tokens and more;
//  - else the streaming entry where its 128-row tiles split fill the SMs 1.5 to 2 times, the
//    seed's 64- or 32-wide tiles where they fill the device, split-K with the smallest
//    power-of-two split that does; where those tiles are shallow (K of 512-896 from 8 MiB),
//    stream-K on one CTA per SM.
// With `launch.programmatic_dependent` the plan is for callers whose preceding kernel is
// PDL-aware: the same classes with thresholds of their own, plus grids spread over the SMs
// (M16Plan::max_ctas_per_sm: a skinny or deep grid whose even share is 2 to 6 CTAs per SM
// below what its registers allow, or a one-chunk deep grid of at most one CTA per SM), the
// skinny entry's chunks as one cluster (M16Plan::chunk_cluster), stream-K in place of the
// tiled entries from 16 MiB at 4-8 tokens, and the seed's contiguous entries replaced by
// split-K with a split of 1 (the same kernel, launched with PDL).
struct M16Plan {
  // "w8a16_gemm_m16", "w8a16_gemm_m16_n64", "w8a16_gemm_m16_splitk",
  // "w8a16_gemm_m16_stream" (w8a16_gemm_m16_stream.hpp), "w8a16_gemm_m16_streamk" or
  // "w8a16_gemm_m16_skinny" (its one-block-per-warp kernel) or
  // "w8a16_gemm_m16_skinny_deep", "_deep3" or "_deep32" (on one chunk of K, where
  // warp_blocks x warps covers K, no workspace; the deep entry may run in chunks, with PDL
  // on small layers and on narrow, deep ones, with the caller's workspace of
  // w8a16_gemm_m16_skinny_workspace_bytes(n, k, warps, warp_blocks))
  std::string_view entry;
  std::uint32_t split;     // 1 for the seed's entries, stream-K and skinny
  std::uint32_t ctas = 0;  // stream-K's persistent grid; 0 for the other entries
  std::uint32_t stages = 0;  // stream-K's ring stages; 0: its launcher's default
  std::uint32_t warps = 0;   // the skinny entries' warps per CTA; 0 for the other entries
  std::uint32_t warp_blocks = 0;  // the deep skinny entry's blocks per warp, else 0
  // The skinny entry: launch with M16LaunchOptions::chunk_cluster (a PDL plan only).
  bool chunk_cluster = false;
  // The skinny entries: launch with M16LaunchOptions::max_ctas_per_sm (a PDL plan only).
  std::uint32_t max_ctas_per_sm = 0;
};

M16Plan plan_m16_gemm(std::uint32_t m, std::uint32_t n, std::uint32_t k, M16PlanDevice device,
                      M16LaunchOptions launch = {});

// The plan without PDL for a caller whose deep skinny launcher takes no workspace (the C
// ABI's metrale_w8a16_gemm_m16_skinny_deep): as plan_m16_gemm, but the deep entry runs on
// one chunk of K only, where plan_m16_gemm would run it in chunks.
M16Plan plan_m16_gemm_one_chunk_deep(std::uint32_t m, std::uint32_t n, std::uint32_t k,
                                     M16PlanDevice device);

// The ring stages plan_m16_gemm gives stream-K on `ctas` CTAs of a device with `sm_count`
// SMs: 3 from two CTAs per SM, else 0 (the launcher's default, 4).
std::uint32_t streamk_plan_stages(std::uint32_t ctas, std::uint32_t sm_count);

}  // namespace metrale
