// Split-K entry of the M16 tensor-core GEMM (the strided kernel of
// kernel_sources/w8a16_gemm_m16.cu, launched in clusters; its handle comes from the
// strided variant's modules): each 32-column tile is computed by a thread-block cluster
// of `split` CTAs, CTA r reducing the r-th share of the 128-K blocks; the partial tiles
// are added in rank order through distributed shared memory. Deterministic
// (bit-identical from run to run), no atomics, and held to the same accuracy budget as
// the seed's entries. It fills the GPU where ceil(N/32) tiles alone would leave SMs idle
// (skinny N, small layers).
//
// Grid: (ceil(N/32), split, 1)  Block: (128, 1, 1)  Cluster: (1, split, 1).
// Same operands and guards as w8a16_gemm_m16_strided, plus 1 <= split <= 8 and
// split <= K/128.
#pragma once

#include <cstdint>
#include <string_view>

#include "metrale/gpu_backend.hpp"

namespace metrale {

// The largest portable cluster: the most CTAs one tile is split across.
inline constexpr std::uint32_t W8A16_GEMM_M16_SPLITK_MAX = 8;

// Opt-in launch behaviour of the split-K launcher.
struct M16LaunchOptions {
  // Programmatic dependent launch (sm_90): the kernel may start while the preceding
  // kernel of the stream still runs, loading its first weights and scales, and waits for
  // that kernel only before reading the activations and writing the output. The caller
  // promises that the preceding kernel does not write this launch's weights or scales.
  bool programmatic_dependent = false;
  // The skinny entry (w8a16_gemm_m16_skinny): the chunks of K of a row group run as one
  // thread-block cluster and hand their partials to chunk 0 through its shared memory
  // instead of the workspace in L2, where the device and the chunking allow it (sm_90
  // and later, 2 to 8 chunks); elsewhere, and for the other entries, it changes nothing.
  // The same sums in the same order: the results are bit-identical either way.
  bool chunk_cluster = false;
  // The skinny and deep skinny entries: at most this many of the launch's CTAs on one SM
  // (0: as many as its registers allow), enforced through the dynamic shared memory each
  // CTA asks for (sm_75 and later; the same results). With PDL the next launch's CTAs
  // start early in the slots a launch leaves free; capped at an even share of the grid,
  // the launches take turns on every SM instead (docs/performance.md, item 94). The plan
  // sets it (M16Plan::max_ctas_per_sm).
  std::uint32_t max_ctas_per_sm = 0;
};

void w8a16_gemm_m16_splitk(const GpuBackend& gpu, KernelHandle kernel, DevicePtr input,
                           DevicePtr weight, DevicePtr block_scale, DevicePtr output,
                           std::uint32_t m, std::uint32_t n, std::uint32_t k,
                           std::uint32_t a_row_stride, std::uint32_t c_row_stride,
                           std::uint32_t split, StreamHandle stream,
                           M16LaunchOptions options = {});

// Which entry and split to run for a shape on a device with `sm_count` SMs (for callers
// that ask for the automatic choice, e.g. attention projections; the dense FFN keeps
// METRALE_FFN_M16_TC_NTILE): above 8 tokens the deep skinny entry's 32-row form on one
// chunk of K where w8a16_gemm_m16_skinny_deep32_form suits the shape; else above 8
// tokens, with or without PDL, on layers of 8-64 MiB (with PDL 10-64) with K of at least
// 10240 and 40 row groups to under 85 % of the SMs (without PDL also with K of 8192-9216
// from 80 row groups to under 80 %), the deep skinny entry in chunks of K on 4 warps, of 4 blocks where those CTAs all fit at once, else of 8 where those fit and the
// groups are under three quarters of the SMs (the caller's workspace); else without PDL up
// to 8 tokens, on layers under 64 MiB with K of at least 8192, 72 row groups (48 with K of
// at least 10240) to under two per SM, whose one-chunk deep CTAs fill under three quarters
// of the slots, the deep skinny entry in chunks of K (the first of 8 warps of 2 blocks, 4
// of 4 and 4 of 8 whose CTAs all fit at once; the caller's workspace), and under 16 MiB
// with K of 4096 or 6144 in equal chunks of 8 warps of 2 blocks that fill half the slots
// where the one-chunk form (below) does not suit; else on layers of 8-32 MiB where the deep
// entry's form has 4 warps, the skinny entry on one chunk of K: at K = 512 on 4 warps up to 8
// tokens, and above without PDL where no deep form fits at once; at K of 640-896 on 8 warps
// up to 8 tokens without PDL where the form fits (with PDL at K = 640 stream-K on one CTA
// per SM); at K = 896 on 8 warps up to 8 tokens where the form's 2-warp CTAs fit (with PDL
// where they fill under three quarters of the slots); else the deep skinny entry on
// one chunk of K (w8a16_gemm_m16_skinny_deep or _deep3, as w8a16_gemm_m16_skinny_deep_form
// says) on layers of 16-64 MiB with K of at least 1536, or of 512-1024 on layers of up to
// 32 MiB (above 8 tokens only where its CTAs all fit at once), where its CTAs fill at
// least half of the device's CTA slots (above 8 tokens from 20 MiB, CTAs of 2 warps, 90
// %; above 14 tokens the three-per-SM form with K of at least 7168, 90 %); with K of 512 or
// 1024 where no form fits at once, up to 48 MiB, up to 8 tokens (with PDL up to 6) on 4
// warps, in waves; on layers of 8-16 MiB with K of 512-896 or 1536-3584 (or of 1024 above 8
// tokens, or up to 8 where the form's CTAs have 4 warps) as on those of 16-64 MiB; and
// up to 8 tokens on smaller layers with K of at least 4096 where its CTAs all fit at once
// with at most 2 blocks a warp and fill 75 % of the slots (with PDL 45 %, or with more
// blocks two thirds where its chunks below do not fit), and above 8 tokens on smaller
// layers with K of at least 4096 where its CTAs all fit at once and fill 80 % of the slots
// (70 % from 13 tokens, 12 with PDL, two thirds from 14 tokens, 13 with PDL; without PDL
// with K of at least 5120), and up to 8 tokens on layers of 64 MiB
// and more where its CTAs all fit at once and fill two thirds of the slots (with PDL 80 %),
// on 8 warps with at most 12 blocks of K each, on 16 with at most 14, or without PDL on 4
// with at most 12; else, for callers that launch with PDL, up to 8 tokens on layers under
// 16 MiB with K of at least 4096, the deep skinny entry in chunks of K (8 warps of 2
// blocks, the caller's workspace) where its CTAs all fit at once and fill 45 % of the
// slots; else the skinny entry
// (w8a16_gemm_m16_skinny.hpp, 8 warps per CTA, the caller's workspace) on layers under 16
// MiB, on 16 MiB ones, up to 8 tokens on those up to 24 MiB and at one token on those of
// 32-64 MiB with K of at least 4096, all with K of at least 1024; else stream-K
// (w8a16_gemm_m16_streamk.hpp, on `ctas` CTAs with `stages` ring stages and the caller's
// workspace) on layers of 64 MiB and more, on two CTAs per SM or on one where the layer
// has at most 64 units (128 rows x 128 K) per SM and, up to 8 tokens, fewer 128-row tiles
// than two per SM, above 8 at most one per SM; on one from 32 MiB at 2 tokens and more
// (at 1 where the seed's tiles leave SMs idle), from 20 MiB at 5 tokens and more, and from
// 8 MiB with K of 512-896 where the seed's tiles would run; else the streaming entry on
// wide layers where a split
// of its 128-row tiles fills the SMs 1.5 to 2 times over; else above 8 tokens the seed's
// w8a16_gemm_m16_n64 where its 64-wide tiles fill the device; else the seed's
// w8a16_gemm_m16 when its tiles do; else w8a16_gemm_m16_splitk with the smallest
// power-of-two split that does.
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
//
// With `launch.programmatic_dependent` the plan is for callers that launch with
// programmatic dependent launch (their preceding kernel PDL-aware): the 32-row form as
// above on layers of up to 64 MiB; else up to 8 tokens, on layers of 16-64 MiB whose deep
// CTAs fit at once only on 2 warps, CTAs of 8 or 4 warps with 2 or 3 blocks each, and on
// those of up to 36 MiB with K = 1536 stream-K on two CTAs per SM instead, as on those
// under 64 MiB with K of 640-896 where no form of the deep entry fits at once; else the deep
// skinny entry as above where its CTAs all fit on the device at once and fill at least two
// thirds of its CTA slots or are spread over the SMs (below), and up to 8 tokens its form
// in chunks as above; up to 8 tokens on layers of 16-64 MiB with K of at least 10240 and
// 48 row groups to one per SM whose one-chunk deep CTAs fill under three quarters of the
// slots, the deep skinny entry in chunks of K, not on one chunk: 8 warps of 2 blocks
// where those CTAs fill at most one and a half times the slots, else 4 of 4 where they all
// fit; else the skinny entry on layers under 16 MiB and on 16 MiB ones with
// K of at least 4096, its chunks as one cluster (chunk_cluster) up to 8 tokens where they
// number 4 to 8 and its CTAs fill at most 90 % of its CTA slots, above 8 tokens where they
// number 7 or 8 and all its CTAs fit on the device at once. A skinny or deep grid whose
// even share, ceil(CTAs / SMs), is 2 to 6 CTAs per SM and below what their registers allow
// runs spread, that share at most on an SM (max_ctas_per_sm), and never as a cluster; so
// does a one-chunk deep grid of at most one CTA per SM where two fit. From 16 MiB at 4 to
// 8 tokens (with K = 1024 from 4 tokens up) stream-K on one CTA per SM
// replaces the tiled entries; otherwise
// the seed's contiguous entries, which take no launch options, give way to
// w8a16_gemm_m16_splitk with a split of 1 (the same kernel code, strided); stream-K keeps
// its grid, but from 64 MiB takes one CTA per SM only up to 56 units per SM and three
// 128-row tiles per eight SMs, or above 8 tokens up to 49 units and one tile per SM.
M16Plan plan_m16_gemm(std::uint32_t m, std::uint32_t n, std::uint32_t k,
                      std::uint32_t sm_count, M16LaunchOptions launch = {});

// The plan without PDL for a caller whose deep skinny launcher takes no workspace (the C
// ABI's metrale_w8a16_gemm_m16_skinny_deep): as plan_m16_gemm, but the deep entry runs on
// one chunk of K only, where plan_m16_gemm would run it in chunks.
M16Plan plan_m16_gemm_one_chunk_deep(std::uint32_t m, std::uint32_t n, std::uint32_t k,
                                     std::uint32_t sm_count);

// The ring stages plan_m16_gemm gives stream-K on `ctas` CTAs of a device with `sm_count`
// SMs: 3 from two CTAs per SM, else 0 (the launcher's default, 4).
std::uint32_t streamk_plan_stages(std::uint32_t ctas, std::uint32_t sm_count);

}  // namespace metrale
