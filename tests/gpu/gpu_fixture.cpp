#include "gpu/gpu_fixture.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "metrale/fill_random.hpp"
#include "metrale/host_reference.hpp"
#include "metrale/nvrtc_compiler.hpp"
#include "metrale/w8a16_gemm_m16.hpp"
#include "metrale/w8a16_gemm_m16_skinny.hpp"
#include "metrale/w8a16_gemm_m16_splitk.hpp"
#include "metrale/w8a16_gemm_m16_stream.hpp"
#include "metrale/w8a16_gemv_batch16.hpp"

namespace metrale::test {
namespace {

constexpr std::size_t kGuardElems = 256;

std::uint32_t elems(std::size_t n) { return static_cast<std::uint32_t>(n); }

}  // namespace

std::unique_ptr<LoadedModule> load_test_kernels(const std::string& name,
                                                const std::string& source) {
  CudaBackend& b = gpu().backend;
  const CompiledModule compiled =
      nvrtc_compile(CompileRequest{name + ".cu", source, {}, {}, b.target()});
  return b.load_module(compiled.image, name);
}

GpuContext::GpuContext() {
  // Room for stream-K with N up to 2^20 on the largest test grid (33 x 64 CTAs) or 4 CTAs
  // per SM, and for the skinny entry's test forms on the largest test layer.
  const std::uint64_t bytes = std::max(
      w8a16_gemm_m16_streamk_workspace_bytes(1u << 20, std::max(4 * sm_count(), 33u * 64)),
      w8a16_gemm_m16_skinny_workspace_bytes(36864, 18432, 1, 2));
  streamk_buffer = DeviceBuffer(backend, bytes);
  backend.fill_bytes(streamk_buffer.get(), 0, bytes);
  backend.synchronize();
}

GpuContext& gpu() {
  static GpuContext context;
  return context;
}

Problem::Problem(std::uint32_t m_, std::uint32_t n_, std::uint32_t k_, std::uint32_t a_stride,
                 std::uint32_t c_stride, std::uint32_t seed, const Ranges& ranges)
    : m(m_), n(n_), k(k_), a_row_stride(a_stride), c_row_stride(c_stride) {
  CudaBackend& b = gpu().backend;
  input = DeviceBuffer(b, std::size_t{16} * a_stride * 2);
  weight = DeviceBuffer(b, std::size_t{n} * k);
  scale = DeviceBuffer(b, std::size_t{(n + 127) / 128} * (k / 128) * 4);
  out_elems = std::size_t{16} * c_stride + kGuardElems;
  out = DeviceBuffer(b, out_elems * 2);
  ref = DeviceBuffer(b, out_elems * 2);
  refill(seed, ranges);
}

void Problem::refill(std::uint32_t seed, const Ranges& ranges) {
  const float act = ranges.activation_scale;
  const std::uint32_t max_mag = ranges.fp8_max_magnitude;
  const float lo = ranges.scale_lo, hi = ranges.scale_hi;
  ModuleCache& cache = gpu().cache;
  fill_random_bf16(cache, input.get(), elems(input.size() / 2), seed * 3 + 1, act);
  fill_random_fp8(cache, weight.get(), elems(weight.size()), seed * 3 + 2, max_mag);
  fill_random_f32(cache, scale.get(), elems(scale.size() / 4), seed * 3 + 3, lo, hi);
  poison();
}

void Problem::poison() {
  for (const DeviceBuffer* b : {&out, &ref}) {
    fill_u16(gpu().cache, b->get(), elems(out_elems), kPoison);
  }
}

std::vector<std::uint16_t> Problem::download_out() const {
  std::vector<std::uint16_t> v(out_elems);
  gpu().backend.download(v.data(), out.get(), v.size() * 2);
  return v;
}

std::vector<std::uint16_t> Problem::download_ref() const {
  std::vector<std::uint16_t> v(out_elems);
  gpu().backend.download(v.data(), ref.get(), v.size() * 2);
  return v;
}

void Problem::run_reference() {
  w8a16_gemv_batch16_strided(gpu().backend, gpu().cache.kernel("w8a16_gemv_batch16_strided"),
                             input.get(), weight.get(), scale.get(), ref.get(), m, n, k,
                             a_row_stride, c_row_stride, 0);
}

OutputCheck check_output(const Problem& p, const std::vector<std::uint16_t>& got,
                         const std::vector<std::uint16_t>& ref) {
  OutputCheck out;
  for (std::size_t e = 0; e < got.size(); ++e) {
    const std::size_t i = e / p.c_row_stride, j = e % p.c_row_stride;
    if (i < p.m && j < p.n) continue;
    if (got[e] != kPoison) ++out.written_outside;
  }
  for (std::uint32_t i = 0; i < p.m; ++i) {
    const std::size_t row = std::size_t{i} * p.c_row_stride;
    check_row_budget(out.budget, got.data() + row, ref.data() + row, p.n, p.k, i);
  }
  return out;
}

TcEntry splitk_entry(std::uint32_t split, bool pdl = false) {
  return {fmt::format("w8a16_gemm_m16_splitk/{}{}", split, pdl ? "+pdl" : ""), true,
          [split, pdl](const Problem& p, StreamHandle s) {
            w8a16_gemm_m16_splitk(gpu().backend, gpu().cache.kernel("w8a16_gemm_m16_splitk"),
                                  p.input.get(), p.weight.get(), p.scale.get(), p.out.get(), p.m,
                                  p.n, p.k, p.a_row_stride, p.c_row_stride,
                                  std::min(split, p.k / 128), s, M16LaunchOptions{pdl});
          }};
}

TcEntry stream_entry(std::uint32_t split, bool pdl = false, StreamTuning tuning = {}) {
  std::string name = fmt::format("w8a16_gemm_m16_stream/{}{}", split, pdl ? "+pdl" : "");
  if (tuning.rows != 0) name += fmt::format(" rows {}", tuning.rows);
  if (tuning.stages != 0) name += fmt::format(" stages {}", tuning.stages);
  return {name, true, [split, pdl, tuning](const Problem& p, StreamHandle s) {
            w8a16_gemm_m16_stream(gpu().backend, gpu().cache.kernel("w8a16_gemm_m16_stream"),
                                  p.input.get(), p.weight.get(), p.scale.get(), p.out.get(), p.m,
                                  p.n, p.k, p.a_row_stride, p.c_row_stride,
                                  std::min(split, p.k / 128), s, M16LaunchOptions{pdl}, tuning);
          }};
}

// Stream-K on `ctas` CTAs, or ctas_per_sm x the SM count where ctas is 0.
TcEntry streamk_entry(std::uint32_t ctas_per_sm, std::uint32_t ctas = 0, bool pdl = false,
                      std::uint32_t stages = 0) {
  std::string name = ctas != 0 ? fmt::format("w8a16_gemm_m16_streamk {} CTAs", ctas)
                               : fmt::format("w8a16_gemm_m16_streamk {} CTAs per SM", ctas_per_sm);
  if (pdl) name += " +pdl";
  if (stages != 0) name += fmt::format(" stages {}", stages);
  return {name, true, [ctas_per_sm, ctas, pdl, stages](const Problem& p, StreamHandle s) {
            const std::uint32_t grid = ctas != 0 ? ctas : ctas_per_sm * gpu().sm_count();
            w8a16_gemm_m16_streamk(gpu().backend, gpu().cache.kernel("w8a16_gemm_m16_streamk"),
                                   p.input.get(), p.weight.get(), p.scale.get(), p.out.get(),
                                   p.m, p.n, p.k, p.a_row_stride, p.c_row_stride,
                                   gpu().streamk_workspace(), grid, s, M16LaunchOptions{pdl},
                                   stages);
          }};
}

// ".spN": at most N CTAs on an SM.
std::string cap_suffix(std::uint32_t max_ctas_per_sm) {
  return max_ctas_per_sm != 0 ? fmt::format(".sp{}", max_ctas_per_sm) : std::string();
}

TcEntry skinny_entry(std::uint32_t warps, bool two_blocks, bool pdl, bool cluster,
                     std::uint32_t max_ctas_per_sm) {
  const char* kernel = two_blocks ? "w8a16_gemm_m16_skinny2" : "w8a16_gemm_m16_skinny";
  return {fmt::format("{}/{}{}{}{}", kernel, warps, cluster ? ".cl" : "",
                      cap_suffix(max_ctas_per_sm), pdl ? "+pdl" : ""),
          true, [kernel, warps, pdl, cluster, max_ctas_per_sm](const Problem& p, StreamHandle s) {
            w8a16_gemm_m16_skinny(gpu().backend, gpu().cache.kernel(kernel), p.input.get(),
                                  p.weight.get(), p.scale.get(), p.out.get(), p.m, p.n, p.k,
                                  p.a_row_stride, p.c_row_stride, gpu().streamk_workspace(), warps,
                                  s, M16LaunchOptions{pdl, cluster, max_ctas_per_sm});
          }};
}

TcEntry skinny_deep_entry(std::uint32_t warps, std::uint32_t warp_blocks, bool pdl,
                          const char* kernel, std::uint32_t max_ctas_per_sm) {
  return {fmt::format("{}/{}x{}{}{}", kernel, warps, warp_blocks, cap_suffix(max_ctas_per_sm),
                      pdl ? "+pdl" : ""),
          true, [warps, warp_blocks, pdl, kernel, max_ctas_per_sm](const Problem& p, StreamHandle s) {
            w8a16_gemm_m16_skinny_deep(gpu().backend, gpu().cache.kernel(kernel),
                                       p.input.get(), p.weight.get(), p.scale.get(), p.out.get(),
                                       p.m, p.n, p.k, p.a_row_stride, p.c_row_stride,
                                       gpu().streamk_workspace(), warps, warp_blocks, s,
                                       M16LaunchOptions{pdl, false, max_ctas_per_sm});
          }};
}

const std::vector<TcEntry>& tc_entries() {
  static const std::vector<TcEntry> entries = {
      {"w8a16_gemm_m16", false,
       [](const Problem& p, StreamHandle s) {
         w8a16_gemm_m16(gpu().backend, gpu().cache.kernel("w8a16_gemm_m16"), p.input.get(),
                        p.weight.get(), p.scale.get(), p.out.get(), p.m, p.n, p.k, s);
       }},
      {"w8a16_gemm_m16_n64", false,
       [](const Problem& p, StreamHandle s) {
         w8a16_gemm_m16_n64(gpu().backend, gpu().cache.kernel("w8a16_gemm_m16_n64"),
                            p.input.get(), p.weight.get(), p.scale.get(), p.out.get(), p.m, p.n,
                            p.k, s);
       }},
      {"w8a16_gemm_m16_strided", true,
       [](const Problem& p, StreamHandle s) {
         w8a16_gemm_m16_strided(gpu().backend, gpu().cache.kernel("w8a16_gemm_m16_strided"),
                                p.input.get(), p.weight.get(), p.scale.get(), p.out.get(), p.m,
                                p.n, p.k, p.a_row_stride, p.c_row_stride, s);
       }},
      // Split K over clusters of 2, 5 and 8 CTAs (fewer where K has fewer blocks).
      splitk_entry(2),
      splitk_entry(5),
      splitk_entry(8),
      // Programmatic dependent launches, right behind the poisoning and reference
      // kernels of each problem: the activations must still be read after them.
      splitk_entry(1, true),
      splitk_entry(4, true),
      // The streaming entry unsplit with each tile height and the smallest and largest
      // rings, split over clusters of 2 (with 8 stages), 5 and 8 CTAs, and as
      // programmatic dependent launches.
      stream_entry(1, false, {32, 2}),
      stream_entry(1, false, {64, 0}),
      stream_entry(1, false, {128, 0}),
      stream_entry(2, false, {64, 8}),
      stream_entry(5),
      stream_entry(8),
      stream_entry(1, true),
      stream_entry(4, true),
      // Stream-K: one CTA for everything (no tile shared), 7 CTAs (long ranges over
      // several tiles), 2 and 3 per SM, a CTA per unit (every tile shared by all its
      // units' CTAs), the smallest ring, and as a programmatic dependent launch.
      streamk_entry(0, 1),
      streamk_entry(0, 7),
      streamk_entry(2),
      streamk_entry(3, 0, false, 2),
      streamk_entry(0, 33 * 64),
      streamk_entry(2, 0, true),
      // The skinny entry: the plan's 8 warps, 3 warps (a chunk of 384 K, fewer threads
      // than outputs), 16 warps, two blocks per warp on 8, 16 and 1 warps, and as a
      // programmatic dependent launch.
      skinny_entry(8),
      skinny_entry(16),
      skinny_entry(16, true),
      skinny_entry(3),
      skinny_entry(8, true),
      skinny_entry(1, true),
      skinny_entry(8, false, true),
      // Its chunks as one cluster, partials through chunk 0's shared memory: 8 warps, two
      // blocks on 16 warps with PDL, and 3 warps (up to 8 chunks as a cluster, more
      // through the workspace).
      skinny_entry(8, false, false, true),
      skinny_entry(16, true, true, true),
      skinny_entry(3, false, false, true),
      // The deep kernel: one chunk of K on 16 warps (as the plan runs it), 8 warps of 4
      // blocks; 3 warps of 5 and 2 of 7 (K's end inside a chunk and inside a warp's share);
      // as a programmatic dependent launch.
      skinny_deep_entry(16, 64),
      skinny_deep_entry(8, 4),
      skinny_deep_entry(3, 5),
      skinny_deep_entry(2, 7),
      skinny_deep_entry(8, 2, true),
      // Its three-per-SM form (80 registers above 8 tokens): 8 and 2 warps on one chunk, 3
      // warps of 5 blocks, and with PDL.
      skinny_deep_entry(8, 1024, false, "w8a16_gemm_m16_skinny_deep3"),
      skinny_deep_entry(2, 1024, false, "w8a16_gemm_m16_skinny_deep3"),
      skinny_deep_entry(3, 5, false, "w8a16_gemm_m16_skinny_deep3"),
      skinny_deep_entry(4, 2, true, "w8a16_gemm_m16_skinny_deep3"),
      // Its 32-row form (one 16-token build for every m): one chunk on 16 and 8 warps,
      // chunks through the workspace (8 warps of 4 blocks, 3 of 5), and with PDL.
      skinny_deep_entry(16, 1024, false, "w8a16_gemm_m16_skinny_deep32"),
      skinny_deep_entry(8, 4, false, "w8a16_gemm_m16_skinny_deep32"),
      skinny_deep_entry(3, 5, false, "w8a16_gemm_m16_skinny_deep32"),
      skinny_deep_entry(4, 2, true, "w8a16_gemm_m16_skinny_deep32"),
      // Spread over the SMs as the plan runs them with PDL: the skinny entry two to an SM,
      // the deep kernel in chunks three to an SM, on one chunk one to an SM.
      skinny_entry(8, false, true, false, 2),
      skinny_deep_entry(8, 2, true, "w8a16_gemm_m16_skinny_deep", 3),
      skinny_deep_entry(8, 1024, true, "w8a16_gemm_m16_skinny_deep", 1),
  };
  return entries;
}

}  // namespace metrale::test
