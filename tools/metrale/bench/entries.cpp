#include "metrale/bench/entries.hpp"

#include <array>

#include "metrale/error.hpp"
#include "metrale/kernel_launch.hpp"
#include "metrale/m16_plan.hpp"
#include "metrale/w8a16_gemm_m16_skinny.hpp"
#include "metrale/w8a16_gemm_m16_splitk.hpp"
#include "metrale/w8a16_gemm_m16_stream.hpp"

namespace metrale::bench {
namespace {

// The split-K entry with a fixed split, in the contiguous launcher's signature; with
// kPdl, launched as a programmatic dependent launch.
template <std::uint32_t kSplit, bool kPdl = false>
void splitk(const GpuBackend& gpu, KernelHandle kernel, DevicePtr input, DevicePtr weight,
            DevicePtr block_scale, DevicePtr output, std::uint32_t m, std::uint32_t n,
            std::uint32_t k, StreamHandle stream) {
  w8a16_gemm_m16_splitk(gpu, kernel, input, weight, block_scale, output, m, n, k, k, n,
                        kSplit, stream, M16LaunchOptions{kPdl});
}

// The streaming entry with a fixed split; tiles and ring as its launcher picks them
// unless kRows / kStages name them.
template <std::uint32_t kSplit, bool kPdl = false, std::uint32_t kRows = 0,
          std::uint32_t kStages = 0>
void stream(const GpuBackend& gpu, KernelHandle kernel, DevicePtr input, DevicePtr weight,
            DevicePtr block_scale, DevicePtr output, std::uint32_t m, std::uint32_t n,
            std::uint32_t k, StreamHandle s) {
  w8a16_gemm_m16_stream(gpu, kernel, input, weight, block_scale, output, m, n, k, k, n, kSplit,
                        s, M16LaunchOptions{kPdl}, StreamTuning{kRows, kStages});
}

// The stream-K entry on kCtasPerSm CTAs per SM, in the runner's workspace; ring stages
// as its launcher picks them unless kStages names them.
template <std::uint32_t kCtasPerSm, bool kPdl = false, std::uint32_t kStages = 0>
void streamk(const GpuBackend& gpu, KernelHandle kernel, DevicePtr input, DevicePtr weight,
             DevicePtr block_scale, DevicePtr output, std::uint32_t m, std::uint32_t n,
             std::uint32_t k, const EntryResources& resources, StreamHandle s) {
  w8a16_gemm_m16_streamk(gpu, kernel, input, weight, block_scale, output, m, n, k, k, n,
                         resources.workspace, kCtasPerSm * resources.device.sm_count, s,
                         M16LaunchOptions{kPdl}, kStages);
}

// The skinny entry on kWarps warps per CTA, in the runner's workspace (the kernel's
// handle says the blocks per warp).
// With kCluster (".cl"), the chunks of a row group as one cluster.
template <std::uint32_t kWarps, bool kPdl = false, bool kCluster = false>
void skinny(const GpuBackend& gpu, KernelHandle kernel, DevicePtr input, DevicePtr weight,
            DevicePtr block_scale, DevicePtr output, std::uint32_t m, std::uint32_t n,
            std::uint32_t k, const EntryResources& resources, StreamHandle s) {
  w8a16_gemm_m16_skinny(gpu, kernel, input, weight, block_scale, output, m, n, k, k, n,
                        resources.workspace, kWarps, s, M16LaunchOptions{kPdl, kCluster});
}

// ceil(CTAs / SMs) for a launch of a skinny or deep kernel: the cap of its ".sp" forms.
std::uint32_t even_share(const KernelHandle& kernel, std::uint32_t n, std::uint32_t k,
                         std::uint32_t warps, std::uint32_t warp_blocks,
                         const EntryResources& resources) {
  const std::uint64_t ctas = w8a16_gemm_m16_skinny_grid_ctas(
      kernel.name != nullptr ? kernel.name : "", n, k, warps, warp_blocks);
  const std::uint32_t sms = resources.device.sm_count;
  return static_cast<std::uint32_t>((ctas + sms - 1) / sms);
}

// The skinny entry as above, at most ceil(CTAs / SMs) of its CTAs on an SM (".sp", as
// plan_m16_gemm spreads a PDL grid: M16Plan::max_ctas_per_sm).
template <std::uint32_t kWarps, bool kPdl = false>
void skinny_spread(const GpuBackend& gpu, KernelHandle kernel, DevicePtr input, DevicePtr weight,
                   DevicePtr block_scale, DevicePtr output, std::uint32_t m, std::uint32_t n,
                   std::uint32_t k, const EntryResources& resources, StreamHandle s) {
  w8a16_gemm_m16_skinny(gpu, kernel, input, weight, block_scale, output, m, n, k, k, n,
                        resources.workspace, kWarps, s,
                        M16LaunchOptions{kPdl, false,
                                         even_share(kernel, n, k, kWarps, 0, resources)});
}

// The deep skinny kernel on kWarps warps of kBlocks blocks (0: one chunk) the same way.
template <std::uint32_t kWarps, std::uint32_t kBlocks, bool kPdl = false>
void skinny_deep_spread(const GpuBackend& gpu, KernelHandle kernel, DevicePtr input,
                        DevicePtr weight, DevicePtr block_scale, DevicePtr output, std::uint32_t m,
                        std::uint32_t n, std::uint32_t k, const EntryResources& resources,
                        StreamHandle s) {
  const std::uint32_t blocks =
      kBlocks != 0 ? kBlocks : w8a16_gemm_m16_skinny_deep_one_chunk_blocks(k, kWarps);
  const M16LaunchOptions options{kPdl, false,
                                 even_share(kernel, n, k, kWarps, blocks, resources)};
  w8a16_gemm_m16_skinny_deep(gpu, kernel, input, weight, block_scale, output, m, n, k, k, n,
                             resources.workspace, kWarps, blocks, s, options);
}

// The deep skinny kernel on kWarps warps, one chunk, at most kCap of its CTAs on an SM
// (".spN"): the shared memory of a cap without its limit where kCap is what the registers
// allow anyway.
template <std::uint32_t kWarps, std::uint32_t kCap, bool kPdl = false>
void skinny_deep_capped(const GpuBackend& gpu, KernelHandle kernel, DevicePtr input,
                        DevicePtr weight, DevicePtr block_scale, DevicePtr output, std::uint32_t m,
                        std::uint32_t n, std::uint32_t k, const EntryResources& resources,
                        StreamHandle s) {
  w8a16_gemm_m16_skinny_deep(gpu, kernel, input, weight, block_scale, output, m, n, k, k, n,
                             resources.workspace, kWarps,
                             w8a16_gemm_m16_skinny_deep_one_chunk_blocks(k, kWarps), s,
                             M16LaunchOptions{kPdl, false, kCap});
}

// The deep skinny kernel on kWarps warps per CTA of kBlocks blocks each.
template <std::uint32_t kWarps, std::uint32_t kBlocks, bool kPdl = false>
void skinny_deep(const GpuBackend& gpu, KernelHandle kernel, DevicePtr input, DevicePtr weight,
                 DevicePtr block_scale, DevicePtr output, std::uint32_t m, std::uint32_t n,
                 std::uint32_t k, const EntryResources& resources, StreamHandle s) {
  w8a16_gemm_m16_skinny_deep(gpu, kernel, input, weight, block_scale, output, m, n, k, k, n,
                             resources.workspace, kWarps, kBlocks, s, M16LaunchOptions{kPdl});
}

// The deep skinny kernel on kWarps warps per CTA, one chunk: each warp takes 1/kWarps of K.
template <std::uint32_t kWarps, bool kPdl = false>
void skinny_deep_one_chunk(const GpuBackend& gpu, KernelHandle kernel, DevicePtr input,
                           DevicePtr weight, DevicePtr block_scale, DevicePtr output,
                           std::uint32_t m, std::uint32_t n, std::uint32_t k,
                           const EntryResources& resources, StreamHandle s) {
  w8a16_gemm_m16_skinny_deep(gpu, kernel, input, weight, block_scale, output, m, n, k, k, n,
                             resources.workspace, kWarps,
                             w8a16_gemm_m16_skinny_deep_one_chunk_blocks(k, kWarps), s,
                             M16LaunchOptions{kPdl});
}

// The automatic call (w8a16_gemm_m16_auto: its plan, then the planned entry's launcher),
// as an engine calls it; with kPdl the plan and the launch for PDL.
template <bool kPdl = false>
void automatic(const GpuBackend& gpu, KernelHandle, DevicePtr input, DevicePtr weight,
               DevicePtr block_scale, DevicePtr output, std::uint32_t m, std::uint32_t n,
               std::uint32_t k, const EntryResources& resources, StreamHandle s) {
  w8a16_gemm_m16_auto(gpu, resources.kernels, resources.device, input, weight, block_scale,
                      output, m, n, k, k, n, resources.workspace, s, kPdl);
}

// Tuning points, timed only when --entry names them: ".rR" fixes the streaming entry's
// tile rows, ".sS" the ring stages, ".cC" the CTAs per SM of stream-K; "/W" the skinny
// entry's warps per CTA.
constexpr std::array kTuning = {
    // The automatic call, to set against the entry its plan names (the same kernel).
    BenchEntry{"w8a16_gemm_m16_auto", "w8a16_gemm_m16", 1, nullptr, &automatic<>},
    BenchEntry{"w8a16_gemm_m16_auto+pdl", "w8a16_gemm_m16", 1, nullptr, &automatic<true>},
    // The seed's grid on the strided kernel, without a cluster or PDL.
    BenchEntry{"w8a16_gemm_m16_splitk/1", "w8a16_gemm_m16_splitk", 1, &splitk<1>},
    BenchEntry{"w8a16_gemm_m16_stream/1.s2", "w8a16_gemm_m16_stream", 1, &stream<1, false, 0, 2>},
    BenchEntry{"w8a16_gemm_m16_stream/1.s6", "w8a16_gemm_m16_stream", 1, &stream<1, false, 0, 6>},
    BenchEntry{"w8a16_gemm_m16_stream/1.s8", "w8a16_gemm_m16_stream", 1, &stream<1, false, 0, 8>},
    BenchEntry{"w8a16_gemm_m16_stream/1.r64", "w8a16_gemm_m16_stream", 1, &stream<1, false, 64, 0>},
    BenchEntry{"w8a16_gemm_m16_stream/1.r32", "w8a16_gemm_m16_stream", 1, &stream<1, false, 32, 0>},
    BenchEntry{"w8a16_gemm_m16_stream/1.r64.s6", "w8a16_gemm_m16_stream", 1,
               &stream<1, false, 64, 6>},
    BenchEntry{"w8a16_gemm_m16_stream/1.r32.s6", "w8a16_gemm_m16_stream", 1,
               &stream<1, false, 32, 6>},
    BenchEntry{"w8a16_gemm_m16_stream/4.s6", "w8a16_gemm_m16_stream", 4, &stream<4, false, 0, 6>},
    BenchEntry{"w8a16_gemm_m16_streamk.c3", "w8a16_gemm_m16_streamk", 1, nullptr, &streamk<3>},
    BenchEntry{"w8a16_gemm_m16_streamk.s2", "w8a16_gemm_m16_streamk", 1, nullptr,
               &streamk<2, false, 2>},
    BenchEntry{"w8a16_gemm_m16_streamk.c3.s2", "w8a16_gemm_m16_streamk", 1, nullptr,
               &streamk<3, false, 2>},
    BenchEntry{"w8a16_gemm_m16_streamk.c3.s3", "w8a16_gemm_m16_streamk", 1, nullptr,
               &streamk<3, false, 3>},
    BenchEntry{"w8a16_gemm_m16_streamk.c3.s3+pdl", "w8a16_gemm_m16_streamk", 1, nullptr,
               &streamk<3, true, 3>},
    BenchEntry{"w8a16_gemm_m16_streamk.s3", "w8a16_gemm_m16_streamk", 1, nullptr,
               &streamk<2, false, 3>},
    BenchEntry{"w8a16_gemm_m16_streamk.c1.s3", "w8a16_gemm_m16_streamk", 1, nullptr,
               &streamk<1, false, 3>},
    BenchEntry{"w8a16_gemm_m16_streamk.s5", "w8a16_gemm_m16_streamk", 1, nullptr,
               &streamk<2, false, 5>},
    BenchEntry{"w8a16_gemm_m16_streamk.s6", "w8a16_gemm_m16_streamk", 1, nullptr,
               &streamk<2, false, 6>},
    BenchEntry{"w8a16_gemm_m16_streamk.c1.s6", "w8a16_gemm_m16_streamk", 1, nullptr,
               &streamk<1, false, 6>},
    BenchEntry{"w8a16_gemm_m16_streamk.c1.s8", "w8a16_gemm_m16_streamk", 1, nullptr,
               &streamk<1, false, 8>},
    BenchEntry{"w8a16_gemm_m16_streamk.c1.s10", "w8a16_gemm_m16_streamk", 1, nullptr,
               &streamk<1, false, 10>},
    BenchEntry{"w8a16_gemm_m16_streamk.c1.s12", "w8a16_gemm_m16_streamk", 1, nullptr,
               &streamk<1, false, 12>},
    // One CTA per SM with a smaller or larger ring, as programmatic dependent launches.
    BenchEntry{"w8a16_gemm_m16_streamk.c1.s3+pdl", "w8a16_gemm_m16_streamk", 1, nullptr,
               &streamk<1, true, 3>},
    BenchEntry{"w8a16_gemm_m16_streamk.c1.s6+pdl", "w8a16_gemm_m16_streamk", 1, nullptr,
               &streamk<1, true, 6>},
    // Two CTAs per SM with the ring plan_m16_gemm gives them (streamk_plan_stages).
    BenchEntry{"w8a16_gemm_m16_streamk.s3+pdl", "w8a16_gemm_m16_streamk", 1, nullptr,
               &streamk<2, true, 3>},
    // Two CTAs per SM with a ring deep enough that a third CTA never fits beside them.
    BenchEntry{"w8a16_gemm_m16_streamk.s5+pdl", "w8a16_gemm_m16_streamk", 1, nullptr,
               &streamk<2, true, 5>},
    BenchEntry{"w8a16_gemm_m16_streamk.s6+pdl", "w8a16_gemm_m16_streamk", 1, nullptr,
               &streamk<2, true, 6>},
    // The skinny entry on 2, 4 and 16 warps per CTA, one or two blocks per warp.
    BenchEntry{"w8a16_gemm_m16_skinny/16", "w8a16_gemm_m16_skinny", 1, nullptr, &skinny<16>},
    BenchEntry{"w8a16_gemm_m16_skinny2/16", "w8a16_gemm_m16_skinny2", 1, nullptr, &skinny<16>},
    BenchEntry{"w8a16_gemm_m16_skinny/16+pdl", "w8a16_gemm_m16_skinny", 1, nullptr,
               &skinny<16, true>},
    // The chunks of a row group as one cluster, their partials through chunk 0's shared
    // memory (".cl").
    BenchEntry{"w8a16_gemm_m16_skinny/8.cl", "w8a16_gemm_m16_skinny", 1, nullptr,
               &skinny<8, false, true>},
    BenchEntry{"w8a16_gemm_m16_skinny/8.cl+pdl", "w8a16_gemm_m16_skinny", 1, nullptr,
               &skinny<8, true, true>},
    BenchEntry{"w8a16_gemm_m16_skinny/16.cl", "w8a16_gemm_m16_skinny", 1, nullptr,
               &skinny<16, false, true>},
    BenchEntry{"w8a16_gemm_m16_skinny/16.cl+pdl", "w8a16_gemm_m16_skinny", 1, nullptr,
               &skinny<16, true, true>},
    BenchEntry{"w8a16_gemm_m16_skinny2/8.cl", "w8a16_gemm_m16_skinny2", 1, nullptr,
               &skinny<8, false, true>},
    BenchEntry{"w8a16_gemm_m16_skinny2/8.cl+pdl", "w8a16_gemm_m16_skinny2", 1, nullptr,
               &skinny<8, true, true>},
    BenchEntry{"w8a16_gemm_m16_skinny/2", "w8a16_gemm_m16_skinny", 1, nullptr, &skinny<2>},
    BenchEntry{"w8a16_gemm_m16_skinny/4", "w8a16_gemm_m16_skinny", 1, nullptr, &skinny<4>},
    BenchEntry{"w8a16_gemm_m16_skinny2/4", "w8a16_gemm_m16_skinny2", 1, nullptr, &skinny<4>},
    BenchEntry{"w8a16_gemm_m16_skinny/4+pdl", "w8a16_gemm_m16_skinny", 1, nullptr,
               &skinny<4, true>},
    // The deep skinny kernel on W warps of B blocks each ("/WxB"): several chunks of K.
    BenchEntry{"w8a16_gemm_m16_skinny_deep/8x2", "w8a16_gemm_m16_skinny_deep", 1, nullptr,
               &skinny_deep<8, 2>},
    BenchEntry{"w8a16_gemm_m16_skinny_deep/8x4", "w8a16_gemm_m16_skinny_deep", 1, nullptr,
               &skinny_deep<8, 4>},
    BenchEntry{"w8a16_gemm_m16_skinny_deep/4x4", "w8a16_gemm_m16_skinny_deep", 1, nullptr,
               &skinny_deep<4, 4>},
    BenchEntry{"w8a16_gemm_m16_skinny_deep/4x8", "w8a16_gemm_m16_skinny_deep", 1, nullptr,
               &skinny_deep<4, 8>},
    BenchEntry{"w8a16_gemm_m16_skinny_deep/8x4+pdl", "w8a16_gemm_m16_skinny_deep", 1, nullptr,
               &skinny_deep<8, 4, true>},
    BenchEntry{"w8a16_gemm_m16_skinny_deep/8x2+pdl", "w8a16_gemm_m16_skinny_deep", 1, nullptr,
               &skinny_deep<8, 2, true>},
    BenchEntry{"w8a16_gemm_m16_skinny_deep/4x4+pdl", "w8a16_gemm_m16_skinny_deep", 1, nullptr,
               &skinny_deep<4, 4, true>},
    BenchEntry{"w8a16_gemm_m16_skinny_deep/4x8+pdl", "w8a16_gemm_m16_skinny_deep", 1, nullptr,
               &skinny_deep<4, 8, true>},
    // Equal chunks at K = 7168 (56 blocks, 7 x 8): 7 warps of 2 blocks in 4 chunks, of 4
    // in 2, and 14 warps of 2 in 2, where 8 warps of 2 leave a short last chunk.
    BenchEntry{"w8a16_gemm_m16_skinny_deep/7x2", "w8a16_gemm_m16_skinny_deep", 1, nullptr,
               &skinny_deep<7, 2>},
    BenchEntry{"w8a16_gemm_m16_skinny_deep/7x4", "w8a16_gemm_m16_skinny_deep", 1, nullptr,
               &skinny_deep<7, 4>},
    BenchEntry{"w8a16_gemm_m16_skinny_deep/14x2", "w8a16_gemm_m16_skinny_deep", 1, nullptr,
               &skinny_deep<14, 2>},
    BenchEntry{"w8a16_gemm_m16_skinny_deep/7x2+pdl", "w8a16_gemm_m16_skinny_deep", 1, nullptr,
               &skinny_deep<7, 2, true>},
    BenchEntry{"w8a16_gemm_m16_skinny_deep/14x2+pdl", "w8a16_gemm_m16_skinny_deep", 1, nullptr,
               &skinny_deep<14, 2, true>},
    // Its 32-row form on chunks of K: 4 warps of 17 blocks (3 chunks on Qwen3-32B down, 2
    // on DeepSeek-V3 o), 2 warps of 17 (6 and 4).
    BenchEntry{"w8a16_gemm_m16_skinny_deep32/4x17", "w8a16_gemm_m16_skinny_deep32", 1, nullptr,
               &skinny_deep<4, 17>},
    BenchEntry{"w8a16_gemm_m16_skinny_deep32/2x17", "w8a16_gemm_m16_skinny_deep32", 1, nullptr,
               &skinny_deep<2, 17>},
    BenchEntry{"w8a16_gemm_m16_skinny_deep32/4x17+pdl", "w8a16_gemm_m16_skinny_deep32", 1,
               nullptr, &skinny_deep<4, 17, true>},
    BenchEntry{"w8a16_gemm_m16_skinny_deep32/2x17+pdl", "w8a16_gemm_m16_skinny_deep32", 1,
               nullptr, &skinny_deep<2, 17, true>},
    // The skinny and deep entries spread over the SMs, as the plan runs them with PDL.
    BenchEntry{"w8a16_gemm_m16_skinny/8.sp+pdl", "w8a16_gemm_m16_skinny", 1, nullptr,
               &skinny_spread<8, true>},
    BenchEntry{"w8a16_gemm_m16_skinny/4.sp+pdl", "w8a16_gemm_m16_skinny", 1, nullptr,
               &skinny_spread<4, true>},
    BenchEntry{"w8a16_gemm_m16_skinny/16.sp+pdl", "w8a16_gemm_m16_skinny", 1, nullptr,
               &skinny_spread<16, true>},
    BenchEntry{"w8a16_gemm_m16_skinny2/8.sp+pdl", "w8a16_gemm_m16_skinny2", 1, nullptr,
               &skinny_spread<8, true>},
    BenchEntry{"w8a16_gemm_m16_skinny2/4.sp+pdl", "w8a16_gemm_m16_skinny2", 1, nullptr,
               &skinny_spread<4, true>},
    BenchEntry{"w8a16_gemm_m16_skinny_deep/8x2.sp+pdl", "w8a16_gemm_m16_skinny_deep", 1, nullptr,
               &skinny_deep_spread<8, 2, true>},
    BenchEntry{"w8a16_gemm_m16_skinny_deep/7x2.sp+pdl", "w8a16_gemm_m16_skinny_deep", 1, nullptr,
               &skinny_deep_spread<7, 2, true>},
    BenchEntry{"w8a16_gemm_m16_skinny_deep/4x4.sp+pdl", "w8a16_gemm_m16_skinny_deep", 1, nullptr,
               &skinny_deep_spread<4, 4, true>},
    BenchEntry{"w8a16_gemm_m16_skinny_deep/4x8.sp+pdl", "w8a16_gemm_m16_skinny_deep", 1, nullptr,
               &skinny_deep_spread<4, 8, true>},
    BenchEntry{"w8a16_gemm_m16_skinny_deep/16.sp+pdl", "w8a16_gemm_m16_skinny_deep", 1, nullptr,
               &skinny_deep_spread<16, 0, true>},
    BenchEntry{"w8a16_gemm_m16_skinny_deep/8.sp+pdl", "w8a16_gemm_m16_skinny_deep", 1, nullptr,
               &skinny_deep_spread<8, 0, true>},
    BenchEntry{"w8a16_gemm_m16_skinny_deep/4.sp+pdl", "w8a16_gemm_m16_skinny_deep", 1, nullptr,
               &skinny_deep_spread<4, 0, true>},
    BenchEntry{"w8a16_gemm_m16_skinny_deep/2.sp+pdl", "w8a16_gemm_m16_skinny_deep", 1, nullptr,
               &skinny_deep_spread<2, 0, true>},
    BenchEntry{"w8a16_gemm_m16_skinny_deep3/8.sp+pdl", "w8a16_gemm_m16_skinny_deep3", 1, nullptr,
               &skinny_deep_spread<8, 0, true>},
    BenchEntry{"w8a16_gemm_m16_skinny_deep3/4.sp+pdl", "w8a16_gemm_m16_skinny_deep3", 1, nullptr,
               &skinny_deep_spread<4, 0, true>},
    BenchEntry{"w8a16_gemm_m16_skinny_deep/2.sp16", "w8a16_gemm_m16_skinny_deep", 1, nullptr,
               &skinny_deep_capped<2, 16>},
    BenchEntry{"w8a16_gemm_m16_skinny_deep/2.sp16+pdl", "w8a16_gemm_m16_skinny_deep", 1, nullptr,
               &skinny_deep_capped<2, 16, true>},
    BenchEntry{"w8a16_gemm_m16_skinny_deep/2.sp12", "w8a16_gemm_m16_skinny_deep", 1, nullptr,
               &skinny_deep_capped<2, 12>},
    BenchEntry{"w8a16_gemm_m16_skinny_deep3/2.sp+pdl", "w8a16_gemm_m16_skinny_deep3", 1, nullptr,
               &skinny_deep_spread<2, 0, true>},
    // Both forms of the deep kernel on 2 warps, one chunk.
    BenchEntry{"w8a16_gemm_m16_skinny_deep/2", "w8a16_gemm_m16_skinny_deep", 1, nullptr,
               &skinny_deep_one_chunk<2>},
    BenchEntry{"w8a16_gemm_m16_skinny_deep/2+pdl", "w8a16_gemm_m16_skinny_deep", 1, nullptr,
               &skinny_deep_one_chunk<2, true>},
    BenchEntry{"w8a16_gemm_m16_skinny_deep3/2", "w8a16_gemm_m16_skinny_deep3", 1, nullptr,
               &skinny_deep_one_chunk<2>},
    BenchEntry{"w8a16_gemm_m16_skinny_deep3/2+pdl", "w8a16_gemm_m16_skinny_deep3", 1, nullptr,
               &skinny_deep_one_chunk<2, true>},
    // The deep kernel's three-per-SM form on 4 warps, one chunk.
    BenchEntry{"w8a16_gemm_m16_skinny_deep3/4", "w8a16_gemm_m16_skinny_deep3", 1, nullptr,
               &skinny_deep_one_chunk<4>},
    BenchEntry{"w8a16_gemm_m16_skinny_deep3/4+pdl", "w8a16_gemm_m16_skinny_deep3", 1, nullptr,
               &skinny_deep_one_chunk<4, true>},
};

}  // namespace

std::span<const BenchEntry> bench_entries() {
  static constexpr std::array kEntries = {
      BenchEntry{"w8a16_gemm_m16", "w8a16_gemm_m16", 1, &w8a16_gemm_m16},
      BenchEntry{"w8a16_gemm_m16_n64", "w8a16_gemm_m16_n64", 1, &w8a16_gemm_m16_n64},
      BenchEntry{"w8a16_gemm_m16_splitk/2", "w8a16_gemm_m16_splitk", 2, &splitk<2>},
      BenchEntry{"w8a16_gemm_m16_splitk/4", "w8a16_gemm_m16_splitk", 4, &splitk<4>},
      BenchEntry{"w8a16_gemm_m16_splitk/8", "w8a16_gemm_m16_splitk", 8, &splitk<8>},
      // The same launches as programmatic dependent launches (split 1: the seed's grid).
      BenchEntry{"w8a16_gemm_m16_splitk/1+pdl", "w8a16_gemm_m16_splitk", 1, &splitk<1, true>},
      BenchEntry{"w8a16_gemm_m16_splitk/2+pdl", "w8a16_gemm_m16_splitk", 2, &splitk<2, true>},
      BenchEntry{"w8a16_gemm_m16_splitk/4+pdl", "w8a16_gemm_m16_splitk", 4, &splitk<4, true>},
      BenchEntry{"w8a16_gemm_m16_splitk/8+pdl", "w8a16_gemm_m16_splitk", 8, &splitk<8, true>},
      BenchEntry{"w8a16_gemm_m16_stream/1", "w8a16_gemm_m16_stream", 1, &stream<1>},
      BenchEntry{"w8a16_gemm_m16_stream/2", "w8a16_gemm_m16_stream", 2, &stream<2>},
      BenchEntry{"w8a16_gemm_m16_stream/4", "w8a16_gemm_m16_stream", 4, &stream<4>},
      BenchEntry{"w8a16_gemm_m16_stream/8", "w8a16_gemm_m16_stream", 8, &stream<8>},
      BenchEntry{"w8a16_gemm_m16_stream/1+pdl", "w8a16_gemm_m16_stream", 1, &stream<1, true>},
      BenchEntry{"w8a16_gemm_m16_stream/4+pdl", "w8a16_gemm_m16_stream", 4, &stream<4, true>},
      // Stream-K on 2 CTAs per SM (the split column is 1: the grid, not a K split).
      BenchEntry{"w8a16_gemm_m16_streamk", "w8a16_gemm_m16_streamk", 1, nullptr, &streamk<2>},
      BenchEntry{"w8a16_gemm_m16_streamk+pdl", "w8a16_gemm_m16_streamk", 1, nullptr,
                 &streamk<2, true>},
      // On one CTA per SM (what plan_m16_gemm picks up to 8 tokens).
      BenchEntry{"w8a16_gemm_m16_streamk.c1", "w8a16_gemm_m16_streamk", 1, nullptr,
                 &streamk<1>},
      // On one CTA per SM, a CTA of the next launch fits beside each of this one's: the
      // faster PDL form on Llama-3-8B down (docs/performance.md, items 33 and 36).
      BenchEntry{"w8a16_gemm_m16_streamk.c1+pdl", "w8a16_gemm_m16_streamk", 1, nullptr,
                 &streamk<1, true>},
      // The skinny entry on 8 warps per CTA, one (skinny) or two (skinny2) 128-K blocks
      // per warp (the split column is 1: the chunks follow from K).
      BenchEntry{"w8a16_gemm_m16_skinny/8", "w8a16_gemm_m16_skinny", 1, nullptr, &skinny<8>},
      BenchEntry{"w8a16_gemm_m16_skinny2/8", "w8a16_gemm_m16_skinny2", 1, nullptr, &skinny<8>},
      BenchEntry{"w8a16_gemm_m16_skinny/8+pdl", "w8a16_gemm_m16_skinny", 1, nullptr,
                 &skinny<8, true>},
      BenchEntry{"w8a16_gemm_m16_skinny2/8+pdl", "w8a16_gemm_m16_skinny2", 1, nullptr,
                 &skinny<8, true>},
      // The deep skinny kernel on one chunk of K: 4, 8 or 16 warps per CTA
      // (plan_m16_gemm picks by the layer's rows).
      BenchEntry{"w8a16_gemm_m16_skinny_deep/4", "w8a16_gemm_m16_skinny_deep", 1, nullptr,
                 &skinny_deep_one_chunk<4>},
      BenchEntry{"w8a16_gemm_m16_skinny_deep/8", "w8a16_gemm_m16_skinny_deep", 1, nullptr,
                 &skinny_deep_one_chunk<8>},
      BenchEntry{"w8a16_gemm_m16_skinny_deep/16", "w8a16_gemm_m16_skinny_deep", 1, nullptr,
                 &skinny_deep_one_chunk<16>},
      BenchEntry{"w8a16_gemm_m16_skinny_deep/4+pdl", "w8a16_gemm_m16_skinny_deep", 1, nullptr,
                 &skinny_deep_one_chunk<4, true>},
      BenchEntry{"w8a16_gemm_m16_skinny_deep/8+pdl", "w8a16_gemm_m16_skinny_deep", 1, nullptr,
                 &skinny_deep_one_chunk<8, true>},
      BenchEntry{"w8a16_gemm_m16_skinny_deep/16+pdl", "w8a16_gemm_m16_skinny_deep", 1, nullptr,
                 &skinny_deep_one_chunk<16, true>},
      // Its form for CTAs of up to 8 warps, three per SM (80 registers above 8 tokens).
      BenchEntry{"w8a16_gemm_m16_skinny_deep3/8", "w8a16_gemm_m16_skinny_deep3", 1, nullptr,
                 &skinny_deep_one_chunk<8>},
      BenchEntry{"w8a16_gemm_m16_skinny_deep3/8+pdl", "w8a16_gemm_m16_skinny_deep3", 1, nullptr,
                 &skinny_deep_one_chunk<8, true>},
      // Its form on 32 rows per CTA (one 16-token build for every m).
      BenchEntry{"w8a16_gemm_m16_skinny_deep32/8", "w8a16_gemm_m16_skinny_deep32", 1, nullptr,
                 &skinny_deep_one_chunk<8>},
      BenchEntry{"w8a16_gemm_m16_skinny_deep32/16", "w8a16_gemm_m16_skinny_deep32", 1, nullptr,
                 &skinny_deep_one_chunk<16>},
      BenchEntry{"w8a16_gemm_m16_skinny_deep32/8+pdl", "w8a16_gemm_m16_skinny_deep32", 1,
                 nullptr, &skinny_deep_one_chunk<8, true>},
      BenchEntry{"w8a16_gemm_m16_skinny_deep32/16+pdl", "w8a16_gemm_m16_skinny_deep32", 1,
                 nullptr, &skinny_deep_one_chunk<16, true>},
  };
  return kEntries;
}

std::span<const BenchEntry> tuning_entries() { return kTuning; }

std::vector<BenchEntry> parse_entries(std::string_view list) {
  std::vector<BenchEntry> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t end = std::min(list.find(',', start), list.size());
    const std::string_view name = list.substr(start, end - start);
    const BenchEntry* found = nullptr;
    std::string known;
    for (const auto table : {bench_entries(), tuning_entries()}) {
      for (const BenchEntry& e : table) {
        if (e.name == name) found = &e;
        known += (known.empty() ? "" : ", ") + std::string(e.name);
      }
    }
    ensure(found != nullptr, "--entry: no benchmarked entry named '{}' (known: {})", name,
           known);
    out.push_back(*found);
    start = end + 1;
  }
  return out;
}

}  // namespace metrale::bench
