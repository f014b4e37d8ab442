// Skinny entry of the M16 tensor-core GEMM (kernel_sources/w8a16_gemm_m16_skinny.cu), for
// layers of a few MiB (DeepSeek-V3 q_a, kv_a): every warp requests its one or two 128-K
// blocks of 16 weight rows at once, a CTA of `warps` warps owns 16 rows and a chunk of K,
// and the chunks of a row group are added in chunk order through the caller's workspace
// (flagged 64-bit words), or with M16LaunchOptions::chunk_cluster through the shared
// memory of a cluster (the workspace is still required, for devices and chunkings where
// no cluster forms). Deterministic (bit-identical from run to run on one device and
// shape), no atomics, held to the same accuracy budget as the seed's entries.
//
// The kernels: "w8a16_gemm_m16_skinny" (one block per warp) and "w8a16_gemm_m16_skinny2"
// (two), both requested at once, and the deep kernel "w8a16_gemm_m16_skinny_deep" (B
// blocks per warp, the caller's, taken one after another with the next ones in flight:
// for layers of tens of MiB) with its forms "_deep3" (three CTAs per SM) and "_deep32"
// (32 rows per CTA). w8a16_gemm_m16_skinny takes either of the first two handles and the
// chunking follows from it; w8a16_gemm_m16_skinny_deep the deep ones. Grid: (chunks,
// ceil(N/16), 1), ceil(N/32) for _deep32  Block: (32 x warps, 1, 1). Same operands and
// guards as w8a16_gemm_m16_strided, plus the workspace and 1 <= warps <= 16.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "metrale/gpu_backend.hpp"
#include "metrale/m16_launch_options.hpp"
#include "metrale/w8a16_gemm_m16_streamk.hpp"

namespace metrale {

inline constexpr std::uint32_t W8A16_GEMM_M16_SKINNY_MAX_WARPS = 16;
// The warps per CTA plan_m16_gemm and the C launcher use, but at K = 512 (below).
inline constexpr std::uint32_t W8A16_GEMM_M16_SKINNY_WARPS = 8;
// The warps per CTA plan_m16_gemm and the C launcher run the skinny entry on for depth K:
// 4 at K = 512, whose 4 blocks would leave half of 8 warps idle, else
// W8A16_GEMM_M16_SKINNY_WARPS.
inline constexpr std::uint32_t w8a16_gemm_m16_skinny_plan_warps(std::uint32_t k) {
  return k == 512 ? 4 : W8A16_GEMM_M16_SKINNY_WARPS;
}
// The most chunks of a row group that run as one cluster (M16LaunchOptions::chunk_cluster;
// the portable cluster size).
inline constexpr std::uint32_t W8A16_GEMM_M16_SKINNY_MAX_CLUSTER_CHUNKS = 8;

// The most blocks per warp the deep launcher takes (K up to 512 Ki on 4 warps in one
// chunk); the kernel's loop takes any count, the bound catches a garbage argument.
inline constexpr std::uint32_t W8A16_GEMM_M16_SKINNY_DEEP_MAX_WARP_BLOCKS = 1024;

// Registers per thread of the deep kernel's builds for m <= 8 and m > 8 on sm_90, rounded
// up to the allocation unit of 8 (64 under the 8-token build's cap of 64, and 96, with
// NVRTC 13.0 and the clamped loads of SKINNY_DEEP_CLAMP; 58 and 92 predicated): the CTAs
// an SM holds, hence the plan's warps per CTA, follow from them. A GPU test checks that
// the loaded kernels stay within them.
inline constexpr std::uint32_t W8A16_GEMM_M16_SKINNY_DEEP_REGISTERS_M8 = 64;
inline constexpr std::uint32_t W8A16_GEMM_M16_SKINNY_DEEP_REGISTERS_M16 = 96;

// The deep kernel's second form, "w8a16_gemm_m16_skinny_deep3": CTAs of at most 8 warps,
// launch bounds of three per SM, which cap its 9..16-token build at 80 registers (its
// 8-token build is the first form's).
inline constexpr std::uint32_t W8A16_GEMM_M16_SKINNY_DEEP3_MAX_WARPS = 8;
inline constexpr std::uint32_t W8A16_GEMM_M16_SKINNY_DEEP3_REGISTERS_M16 = 80;

// The deep kernel's 32-row form, "w8a16_gemm_m16_skinny_deep32": every warp on two 16-row
// groups, one build (16 tokens) for every m, 128 registers with NVRTC 13.0.
inline constexpr std::uint32_t W8A16_GEMM_M16_SKINNY_DEEP32_REGISTERS = 128;

// The same for the one-block kernel, w8a16_gemm_m16_skinny (56 and 72 with NVRTC 13.0).
inline constexpr std::uint32_t W8A16_GEMM_M16_SKINNY_REGISTERS_M8 = 56;
inline constexpr std::uint32_t W8A16_GEMM_M16_SKINNY_REGISTERS_M16 = 72;

// CTAs of `warps` warps of the deep kernel one SM holds for m tokens (64 K registers).
std::uint32_t w8a16_gemm_m16_skinny_deep_ctas_per_sm(std::uint32_t m, std::uint32_t warps);

// The same for its three-per-SM form, w8a16_gemm_m16_skinny_deep3 (0 above 8 warps).
std::uint32_t w8a16_gemm_m16_skinny_deep3_ctas_per_sm(std::uint32_t m, std::uint32_t warps);

// The same for the 32-row form, w8a16_gemm_m16_skinny_deep32 (any m).
std::uint32_t w8a16_gemm_m16_skinny_deep32_ctas_per_sm(std::uint32_t warps);

// CTAs of `warps` warps of the one-block kernel one SM holds for m tokens.
std::uint32_t w8a16_gemm_m16_skinny_ctas_per_sm(std::uint32_t m, std::uint32_t warps);

// The form of the deep kernel and the warps per CTA the plan gives it on one chunk of K
// (one CTA per 16 rows).
struct SkinnyDeepForm {
  std::string_view kernel;    // "w8a16_gemm_m16_skinny_deep", "_deep3" or "_deep32"
  std::uint32_t warps;        // 16, 8, 4 or 2
  std::uint32_t ctas_per_sm;  // CTAs of `warps` warps of `kernel` one SM holds
};

// The form for m tokens and n rows on `sm_count` SMs: the most warps of 16, 8, 4 and 2
// whose CTAs all fit on the device at once, in the first form where it fits, else in the
// three-per-SM form (above 8 tokens it fits 3 CTAs of 8 warps, 6 of 4 and 12 of 2 on an SM
// where the first fits 2, 5 and 10); else the first form on 4 warps. Measured on an H200
// (docs/performance.md, items 58 and 70): the first form's best of 16, 8 and 4 on every
// 16-64 MiB layer of the benchmark at m = 1, 2, 4, 8, 9, 12, 16; above 8 tokens the
// three-per-SM form 0.83-0.93x its time where only it fits (Llama-3-8B qkv on 8 warps,
// 12288 x 2048 on 4), 0.74-0.78x with PDL; 2 warps where only they fit 0.90-0.93x the time
// of 4 (DeepSeek-V3 q_b at m = 1, 8 and 16, 16384 x 2048 at 16).
SkinnyDeepForm w8a16_gemm_m16_skinny_deep_form(std::uint32_t m, std::uint32_t n,
                                               std::uint32_t sm_count);

// The 32-row form where it suits m tokens, n x k, on `sm_count` SMs, else none: above 8
// tokens, on 16 warps or else 8, where its ceil(N/32) CTAs all fit on the device at once,
// fill at least 80 % of its CTA slots and give every warp at least 6 blocks of K on 16
// warps, 2 on 8 (3 with PDL); with PDL (`pdl`) only on layers of up to 64 MiB. Measured on
// an H200 (docs/performance.md, items 77 and 157), against the best other entry at m = 9,
// 12 and 16: Llama-3-8B down (128 CTAs of 16 warps in 132 slots, 7 blocks per warp)
// 0.96-0.97x, 0.93-0.95x with PDL; DeepSeek-V3 o and down (224 of 8 warps in 264)
// 0.91-0.98x without PDL, 0.97-1.05x with it; 8192 x 8192 (256 in 264) 0.90x, 0.86-0.92x
// with PDL. It lost where fewer CTAs fill the slots (Qwen3-32B down, 160 in 264:
// 1.18-1.31x) and where a warp gets 2 or 4 blocks (Llama-3-8B o, 4096 x 8192 on 16 warps:
// 1.01-1.15x). On layers it was not fitted on (m = 9 and 16): 4096 x 16384 0.92-0.95x,
// 7168 x 8192 0.85-0.91x, 8192 x 14336 0.89-0.90x (0.93-0.98x with PDL, which the rule
// leaves to stream-K there). On 8 warps with 2-6 blocks (7168 and 8192 rows, K of
// 2048-6144) 0.86-0.98x without PDL, with PDL 0.88-1.01x from 3 blocks and 1.02-1.03x at 2;
// on 16 warps 4096 x 12288 (6 blocks) 0.96-0.99x, 3-4 blocks 1.01-1.10x.
std::optional<SkinnyDeepForm> w8a16_gemm_m16_skinny_deep32_form(std::uint32_t m, std::uint32_t n,
                                                                std::uint32_t k,
                                                                std::uint32_t sm_count, bool pdl);

// The blocks per warp that cover K in one chunk on `warps` warps (at least 1): what the
// plan and the C launcher pass the deep kernel, no workspace needed.
std::uint32_t w8a16_gemm_m16_skinny_deep_one_chunk_blocks(std::uint32_t k, std::uint32_t warps);

// K chunks (CTAs per 16-row group) for `warps` warps of `warp_blocks` 128-K blocks each.
std::uint32_t w8a16_gemm_m16_skinny_chunks(std::uint32_t k, std::uint32_t warps,
                                           std::uint32_t warp_blocks);

// The CTAs of a launch of `kernel` ("w8a16_gemm_m16_skinny", "_skinny2" or one of the deep
// kernels) on n x k with `warps` warps of `warp_blocks` blocks each (the skinny kernels:
// 1 and 2, whatever is passed): row groups (16 rows, 32 for _deep32) x chunks of K. What
// the plan's spread (M16Plan::max_ctas_per_sm) shares out over the SMs.
std::uint64_t w8a16_gemm_m16_skinny_grid_ctas(std::string_view kernel, std::uint32_t n,
                                              std::uint32_t k, std::uint32_t warps,
                                              std::uint32_t warp_blocks);

// The workspace a launch needs: a slot of 256 words per group and chunk after the first
// (0 with one chunk). The same workspace as stream-K's (StreamKWorkspace): zeroed once,
// left zero by every completed launch, one stream at a time.
std::uint64_t w8a16_gemm_m16_skinny_workspace_bytes(std::uint32_t n, std::uint32_t k,
                                                    std::uint32_t warps,
                                                    std::uint32_t warp_blocks);

// `kernel`: the handle of "w8a16_gemm_m16_skinny" or "w8a16_gemm_m16_skinny2" (its name
// says the blocks per warp). `workspace` may be empty where one chunk covers K.
void w8a16_gemm_m16_skinny(const GpuBackend& gpu, KernelHandle kernel, DevicePtr input,
                           DevicePtr weight, DevicePtr block_scale, DevicePtr output,
                           std::uint32_t m, std::uint32_t n, std::uint32_t k,
                           std::uint32_t a_row_stride, std::uint32_t c_row_stride,
                           StreamKWorkspace workspace, std::uint32_t warps, StreamHandle stream,
                           M16LaunchOptions options = {});

// `kernel`: the handle of "w8a16_gemm_m16_skinny_deep", of "w8a16_gemm_m16_skinny_deep3"
// with at most 8 warps, or of "w8a16_gemm_m16_skinny_deep32"; 1 <= warp_blocks <= 1024. Chunks
// and workspace as w8a16_gemm_m16_skinny_chunks / _workspace_bytes(n, k, warps,
// warp_blocks).
void w8a16_gemm_m16_skinny_deep(const GpuBackend& gpu, KernelHandle kernel, DevicePtr input,
                                DevicePtr weight, DevicePtr block_scale, DevicePtr output,
                                std::uint32_t m, std::uint32_t n, std::uint32_t k,
                                std::uint32_t a_row_stride, std::uint32_t c_row_stride,
                                StreamKWorkspace workspace, std::uint32_t warps,
                                std::uint32_t warp_blocks, StreamHandle stream,
                                M16LaunchOptions options = {});

}  // namespace metrale
