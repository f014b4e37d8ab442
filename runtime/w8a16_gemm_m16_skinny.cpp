#include "metrale/w8a16_gemm_m16_skinny.hpp"

#include <algorithm>
#include <optional>
#include <string_view>

#include "launch_guards.hpp"
#include "launch_operands.hpp"
#include "metrale/compile_target.hpp"
#include "metrale/error.hpp"
#include "metrale/kernel_launch.hpp"

namespace metrale {
namespace {

constexpr std::uint64_t kSlotBytes = 256 * 8;
// A chunk's partial in chunk 0's shared memory when the chunks form a cluster: 16 tokens
// x 16 rows of FP32.
constexpr std::uint32_t kHandedBytes = 256 * 4;
// The kernel's padded reduction row: 17 floats per token and 16 rows.
constexpr std::uint32_t kRedStride = 17;

// The most CTAs an SM runs at once (sm_75 to sm_121: 16 or 32).
constexpr std::uint32_t kMaxCtasPerSm = 32;

constexpr std::string_view kDeep = "w8a16_gemm_m16_skinny_deep";
// The deep kernel's form for CTAs of up to 8 warps, three per SM.
constexpr std::string_view kDeep3 = "w8a16_gemm_m16_skinny_deep3";
// Its form on 32 rows per CTA: one build, for 16 tokens, serves every m.
constexpr std::string_view kDeep32 = "w8a16_gemm_m16_skinny_deep32";

bool is_deep(std::string_view name) { return name == kDeep || name == kDeep3 || name == kDeep32; }

std::uint32_t rows_per_cta(std::string_view name) { return name == kDeep32 ? 32 : 16; }

std::string_view name_of(const KernelHandle& kernel) {
  return kernel.name != nullptr ? kernel.name : "";
}

// 1 or 2 blocks per warp, from the handle's entry name.
std::uint32_t warp_blocks_of(std::string_view fn, const KernelHandle& kernel) {
  const std::string_view name = name_of(kernel);
  if (name == "w8a16_gemm_m16_skinny") return 1;
  if (name == "w8a16_gemm_m16_skinny2") return 2;
  if (is_deep(name)) {
    fail("{}: the handle is of {}, whose blocks per warp the caller gives: launch it with "
         "w8a16_gemm_m16_skinny_deep", fn, name);
  }
  fail("{}: the handle is of '{}', not of w8a16_gemm_m16_skinny or w8a16_gemm_m16_skinny2", fn,
       name);
}

// Whether the chunks of a row group run as one cluster and hand their partials to chunk
// 0 through its shared memory, as the caller asks (sm_90 and later; not the deep kernel,
// whose launches the plan makes on one chunk); else through the workspace in L2.
bool chunks_as_cluster(const GpuBackend& gpu, std::string_view kernel_name, std::uint32_t chunks,
                       M16LaunchOptions options) {
  if (!options.chunk_cluster || chunks < 2 || chunks > W8A16_GEMM_M16_SKINNY_MAX_CLUSTER_CHUNKS ||
      is_deep(kernel_name)) {
    return false;
  }
  const std::optional<int> sm = sm_number(gpu.target());  // "sm_XY": stays off the heap
  return sm && *sm >= 90;
}

// A slot per 16-row group and chunk after the first.
std::uint64_t slots_bytes(std::uint32_t n, std::uint32_t chunks) {
  return chunks <= 1 ? 0 : std::uint64_t{div_ceil(n, 16)} * (chunks - 1) * kSlotBytes;
}

// Shared memory an SM offers its CTAs and what it reserves beside each CTA's own, by
// compute capability (the CUDA C++ Programming Guide's table); {0, 0} where not known.
struct SmShared {
  std::uint32_t per_sm;
  std::uint32_t reserved_per_cta;
};

SmShared sm_shared(int sm) {
  switch (sm) {
    case 75: return {64 * 1024, 0};
    case 80: case 87: return {164 * 1024, 1024};
    case 86: case 89: case 120: case 121: return {100 * 1024, 1024};
    case 90: case 100: case 101: case 103: case 110: return {228 * 1024, 1024};
    default: return {0, 0};
  }
}

// The dynamic shared memory per CTA that lets an SM hold at most `cap` CTAs of a launch:
// (cap + 1) CTAs overflow the SM's shared memory, cap still fit. 0 where the target's
// shared memory is not known (the launch then runs as many CTAs per SM as it can).
std::uint32_t capping_shared_bytes(const GpuBackend& gpu, std::uint32_t cap) {
  const std::optional<int> sm = sm_number(gpu.target());
  const SmShared s = sm ? sm_shared(*sm) : SmShared{0, 0};
  if (cap == 0 || s.per_sm == 0) return 0;
  const std::uint32_t least = s.per_sm / (cap + 1) + 1;  // with the reserve
  return (least - s.reserved_per_cta + 127) / 128 * 128;
}

// CTAs of `warps` warps at `registers` per thread that the 64 K registers of an SM hold.
std::uint32_t ctas_per_sm(std::uint32_t registers, std::uint32_t warps) {
  constexpr std::uint32_t kRegistersPerSm = 64 * 1024;
  return warps == 0 ? 0 : kRegistersPerSm / (registers * 32 * warps);
}

}  // namespace

std::uint32_t w8a16_gemm_m16_skinny_deep_ctas_per_sm(std::uint32_t m, std::uint32_t warps) {
  return ctas_per_sm(m <= 8 ? W8A16_GEMM_M16_SKINNY_DEEP_REGISTERS_M8
                            : W8A16_GEMM_M16_SKINNY_DEEP_REGISTERS_M16,
                     warps);
}

std::uint32_t w8a16_gemm_m16_skinny_deep3_ctas_per_sm(std::uint32_t m, std::uint32_t warps) {
  if (warps > W8A16_GEMM_M16_SKINNY_DEEP3_MAX_WARPS) return 0;
  return ctas_per_sm(m <= 8 ? W8A16_GEMM_M16_SKINNY_DEEP_REGISTERS_M8
                            : W8A16_GEMM_M16_SKINNY_DEEP3_REGISTERS_M16,
                     warps);
}

std::uint32_t w8a16_gemm_m16_skinny_deep32_ctas_per_sm(std::uint32_t warps) {
  return ctas_per_sm(W8A16_GEMM_M16_SKINNY_DEEP32_REGISTERS, warps);
}

std::uint32_t w8a16_gemm_m16_skinny_ctas_per_sm(std::uint32_t m, std::uint32_t warps) {
  return ctas_per_sm(m <= 8 ? W8A16_GEMM_M16_SKINNY_REGISTERS_M8 : W8A16_GEMM_M16_SKINNY_REGISTERS_M16,
                     warps);
}

SkinnyDeepForm w8a16_gemm_m16_skinny_deep_form(std::uint32_t m, std::uint32_t n,
                                               std::uint32_t sm_count) {
  const std::uint64_t groups = div_ceil(n, 16);
  const auto fits = [&](std::uint32_t ctas) { return groups <= std::uint64_t{sm_count} * ctas; };
  for (const std::uint32_t warps : {16u, 8u, 4u, 2u}) {
    if (const std::uint32_t c = w8a16_gemm_m16_skinny_deep_ctas_per_sm(m, warps); fits(c)) {
      return {kDeep, warps, c};
    }
    if (const std::uint32_t c = w8a16_gemm_m16_skinny_deep3_ctas_per_sm(m, warps); fits(c)) {
      return {kDeep3, warps, c};
    }
  }
  return {kDeep, 4, w8a16_gemm_m16_skinny_deep_ctas_per_sm(m, 4)};
}

std::optional<SkinnyDeepForm> w8a16_gemm_m16_skinny_deep32_form(std::uint32_t m, std::uint32_t n,
                                                                std::uint32_t k,
                                                                std::uint32_t sm_count, bool pdl) {
  constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
  if (m <= 8 || (pdl && std::uint64_t{n} * k > 64 * kMiB)) return std::nullopt;
  const std::uint64_t ctas = div_ceil(n, 32);
  for (const std::uint32_t warps : {16u, 8u}) {
    const std::uint32_t per_sm = w8a16_gemm_m16_skinny_deep32_ctas_per_sm(warps);
    const std::uint64_t slots = std::uint64_t{sm_count} * per_sm;
    if (ctas <= slots) {
      // The blocks a warp needs (docs/performance.md, items 77 and 157): on 16 warps 6 (4
      // lost), on 8 warps 2, 3 with PDL (2 lost there).
      const std::uint32_t min_blocks = warps == 16 ? 6 : pdl ? 3 : 2;
      if (5 * ctas < 4 * slots || k / 128 < min_blocks * warps) return std::nullopt;
      return SkinnyDeepForm{kDeep32, warps, per_sm};
    }
  }
  return std::nullopt;
}

std::uint32_t w8a16_gemm_m16_skinny_deep_one_chunk_blocks(std::uint32_t k, std::uint32_t warps) {
  return warps == 0 ? 1 : std::max(1u, div_ceil(k / 128, warps));
}

std::uint32_t w8a16_gemm_m16_skinny_chunks(std::uint32_t k, std::uint32_t warps,
                                           std::uint32_t warp_blocks) {
  return warps * warp_blocks == 0 ? 0 : div_ceil(k / 128, warps * warp_blocks);
}

std::uint64_t w8a16_gemm_m16_skinny_grid_ctas(std::string_view kernel, std::uint32_t n,
                                              std::uint32_t k, std::uint32_t warps,
                                              std::uint32_t warp_blocks) {
  const std::uint32_t blocks = kernel == "w8a16_gemm_m16_skinny"    ? 1
                               : kernel == "w8a16_gemm_m16_skinny2" ? 2
                                                                    : warp_blocks;
  return std::uint64_t{div_ceil(n, rows_per_cta(kernel))} *
         w8a16_gemm_m16_skinny_chunks(k, warps, blocks);
}

std::uint64_t w8a16_gemm_m16_skinny_workspace_bytes(std::uint32_t n, std::uint32_t k,
                                                    std::uint32_t warps,
                                                    std::uint32_t warp_blocks) {
  return slots_bytes(n, w8a16_gemm_m16_skinny_chunks(k, warps, warp_blocks));
}

namespace {

void launch_skinny(std::string_view fn, const GpuBackend& gpu, KernelHandle kernel,
                   DevicePtr input, DevicePtr weight, DevicePtr block_scale, DevicePtr output,
                   std::uint32_t m, std::uint32_t n, std::uint32_t k, std::uint32_t a_row_stride,
                   std::uint32_t c_row_stride, StreamKWorkspace workspace, std::uint32_t warps,
                   std::uint32_t warp_blocks, StreamHandle stream, M16LaunchOptions options) {
  guards::check_m_and_k(fn, m, k);
  guards::check_blocks(fn, k);
  guards::check_strides(fn, n, k, a_row_stride, c_row_stride);
  ensure(warps >= 1 && warps <= W8A16_GEMM_M16_SKINNY_MAX_WARPS, "{}: warps={} outside 1..={}",
         fn, warps, W8A16_GEMM_M16_SKINNY_MAX_WARPS);
  ensure(options.max_ctas_per_sm <= kMaxCtasPerSm, "{}: max_ctas_per_sm={} over the {} CTAs an "
         "SM runs at most", fn, options.max_ctas_per_sm, kMaxCtasPerSm);
  // 1 or 2 from the skinny handles; the deep kernel's from its caller.
  ensure(warp_blocks >= 1 && warp_blocks <= W8A16_GEMM_M16_SKINNY_DEEP_MAX_WARP_BLOCKS,
         "{}: warp_blocks={} outside 1..={}", fn, warp_blocks,
         W8A16_GEMM_M16_SKINNY_DEEP_MAX_WARP_BLOCKS);
  const std::uint32_t rows = rows_per_cta(name_of(kernel));
  ensure(div_ceil(n, rows) <= 65535, "{}: N={} needs {} CTAs of {} rows, over the grid's 65535",
         fn, n, div_ceil(n, rows), rows);
  guards::check_operands(fn, input, weight, block_scale, output,
                         {m, n, k, a_row_stride, c_row_stride});
  const std::uint32_t chunks = w8a16_gemm_m16_skinny_chunks(k, warps, warp_blocks);
  const std::uint64_t needed = slots_bytes(n, chunks);
  if (needed != 0) {
    ensure(workspace.ptr.address != 0, "{}: workspace is null, and K={} on {} warps of {} "
           "blocks takes {} chunks", fn, k, warps, warp_blocks, chunks);
    ensure(workspace.ptr.address % 16 == 0, "{}: workspace 0x{:x} is not 16-byte aligned", fn,
           workspace.ptr.address);
    ensure(workspace.bytes >= needed,
           "{}: workspace of {} bytes, N={} K={} on {} warps of {} blocks needs {} "
           "(w8a16_gemm_m16_skinny_workspace_bytes)",
           fn, workspace.bytes, n, k, warps, warp_blocks, needed);
  }
  // The 32-row form has one build, for 16 tokens, whatever m.
  const bool one_build = name_of(kernel) == kDeep32;
  const std::uint32_t tokens = m <= 8 && !one_build ? 8 : 16;
  const bool cluster = chunks_as_cluster(gpu, name_of(kernel), chunks, options);
  KernelLaunch launch(gpu, one_build ? kernel : guards::build_for_tokens(fn, kernel, m));
  launch.grid({chunks, div_ceil(n, rows), 1})
      .block({32 * warps, 1, 1})
      .shared_bytes(std::max(warps * tokens * kRedStride * 4 +
                                 (cluster ? (chunks - 1) * kHandedBytes : 0),
                             capping_shared_bytes(gpu, options.max_ctas_per_sm)))
      .programmatic_dependent(options.programmatic_dependent);
  if (cluster) launch.cluster({chunks, 1, 1});
  push_operands(launch, input, weight, block_scale, output, m, n, k)
      .arg_u32(a_row_stride)
      .arg_u32(c_row_stride)
      .arg_ptr(workspace.ptr)
      .launch(stream);
}

}  // namespace

void w8a16_gemm_m16_skinny(const GpuBackend& gpu, KernelHandle kernel, DevicePtr input,
                           DevicePtr weight, DevicePtr block_scale, DevicePtr output,
                           std::uint32_t m, std::uint32_t n, std::uint32_t k,
                           std::uint32_t a_row_stride, std::uint32_t c_row_stride,
                           StreamKWorkspace workspace, std::uint32_t warps, StreamHandle stream,
                           M16LaunchOptions options) {
  constexpr std::string_view fn = "w8a16_gemm_m16_skinny";
  const std::uint32_t warp_blocks = warp_blocks_of(fn, kernel);
  launch_skinny(fn, gpu, kernel, input, weight, block_scale, output, m, n, k, a_row_stride,
                c_row_stride, workspace, warps, warp_blocks, stream, options);
}

void w8a16_gemm_m16_skinny_deep(const GpuBackend& gpu, KernelHandle kernel, DevicePtr input,
                                DevicePtr weight, DevicePtr block_scale, DevicePtr output,
                                std::uint32_t m, std::uint32_t n, std::uint32_t k,
                                std::uint32_t a_row_stride, std::uint32_t c_row_stride,
                                StreamKWorkspace workspace, std::uint32_t warps,
                                std::uint32_t warp_blocks, StreamHandle stream,
                                M16LaunchOptions options) {
  constexpr std::string_view fn = "w8a16_gemm_m16_skinny_deep";
  ensure(is_deep(name_of(kernel)), "{}: the handle is of '{}', not of {}, {} or {}", fn,
         name_of(kernel), kDeep, kDeep3, kDeep32);
  ensure(name_of(kernel) != kDeep3 || warps <= W8A16_GEMM_M16_SKINNY_DEEP3_MAX_WARPS,
         "{}: warps={} on {}, whose CTAs take at most {} warps", fn, warps, kDeep3,
         W8A16_GEMM_M16_SKINNY_DEEP3_MAX_WARPS);
  launch_skinny(fn, gpu, kernel, input, weight, block_scale, output, m, n, k, a_row_stride,
                c_row_stride, workspace, warps, warp_blocks, stream, options);
}

}  // namespace metrale
