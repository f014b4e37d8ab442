#include "gpu/gpu_fixture.hpp"

#include <cmath>
#include <fmt/format.h>

#include "metrale/host_reference.hpp"
#include "metrale/kernel_launch.hpp"
#include "metrale/w8a16_gemm_m16.hpp"
#include "metrale/w8a16_gemv_batch16.hpp"

namespace metrale::test {
namespace {

constexpr std::size_t kGuardElems = 256;

void launch_fill(const char* entry, DevicePtr dst, std::size_t count,
                 const std::function<void(KernelLaunch&)>& args) {
  KernelLaunch launch(gpu().backend, gpu().cache.kernel(entry));
  launch.grid({std::min<std::uint32_t>(div_ceil(static_cast<std::uint32_t>(count), 256), 4096), 1, 1})
      .block({256, 1, 1})
      .arg_ptr(dst)
      .arg_u32(static_cast<std::uint32_t>(count));
  args(launch);
  launch.launch(0);
}

}  // namespace

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
  launch_fill("fill_random_bf16", input.get(), input.size() / 2,
              [&](KernelLaunch& l) { l.arg_u32(seed * 3 + 1).arg_f32(act); });
  launch_fill("fill_random_fp8", weight.get(), weight.size(),
              [&](KernelLaunch& l) { l.arg_u32(seed * 3 + 2).arg_u32(max_mag); });
  launch_fill("fill_random_f32", scale.get(), scale.size() / 4,
              [&](KernelLaunch& l) { l.arg_u32(seed * 3 + 3).arg_f32(lo).arg_f32(hi); });
  poison();
}

void Problem::poison() {
  for (const DeviceBuffer* b : {&out, &ref}) {
    launch_fill("fill_u16", b->get(), out_elems, [](KernelLaunch& l) { l.arg_u32(kPoison); });
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
    check_row(out.budget, got.data() + row, ref.data() + row, p.n, p.k, i);
  }
  return out;
}

void check_row(BudgetReport& b, const std::uint16_t* got, const std::uint16_t* ref,
               std::uint32_t n, std::uint32_t k, std::uint32_t row) {
  double sum_sq = 0.0;
  for (std::uint32_t j = 0; j < n; ++j) {
    const double r = bf16_to_float(ref[j]);
    sum_sq += r * r;
  }
  const double row_rms = std::sqrt(sum_sq / n);
  const double floor = m16_tc_acc_floor(k, row_rms);
  for (std::uint32_t j = 0; j < n; ++j) {
    const float g = bf16_to_float(got[j]);
    const float r = bf16_to_float(ref[j]);
    ++b.checked;
    const double abs_err = std::fabs(static_cast<double>(g) - r);
    if (!std::isnan(abs_err)) {
      b.max_abs = std::max(b.max_abs, abs_err);
      if (floor > 0) b.max_abs_over_floor = std::max(b.max_abs_over_floor, abs_err / floor);
      if (abs_err > floor) b.max_ulp = std::max(b.max_ulp, bf16_ulp_distance(g, r));
    }
    if (!within_m16_tc_budget(g, r, k, row_rms)) {
      if (b.failures == 0) {
        b.first_failure = fmt::format("row {} col {}: got {} (0x{:04x}) ref {} (0x{:04x}), "
                                      "row_rms {:.4g}",
                                      row, j, g, got[j], r, ref[j], row_rms);
      }
      ++b.failures;
    }
  }
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
  };
  return entries;
}

}  // namespace metrale::test
