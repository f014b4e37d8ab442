#include "metrale/bench/oracle_check.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "metrale/error.hpp"
#include "metrale/host_reference.hpp"

namespace metrale::bench {

BudgetReport check_against_reference(std::span<const std::uint16_t> got,
                                     std::span<const std::uint16_t> ref, std::uint32_t m,
                                     std::uint32_t n, std::uint32_t k) {
  const std::size_t count = static_cast<std::size_t>(m) * n;
  ensure(got.size() >= count && ref.size() >= count,
         "check_against_reference: {} / {} outputs for m={} n={}", got.size(), ref.size(), m, n);
  BudgetReport report;
  for (std::uint32_t i = 0; i < m; ++i) {
    const std::uint16_t* ref_row = ref.data() + static_cast<std::size_t>(i) * n;
    const std::uint16_t* got_row = got.data() + static_cast<std::size_t>(i) * n;
    double sum_sq = 0.0;
    for (std::uint32_t j = 0; j < n; ++j) {
      const double r = bf16_to_float(ref_row[j]);
      sum_sq += r * r;
    }
    const double row_rms = std::sqrt(sum_sq / n);
    const double floor = m16_tc_acc_floor(k, row_rms);
    for (std::uint32_t j = 0; j < n; ++j) {
      const float g = bf16_to_float(got_row[j]);
      const float r = bf16_to_float(ref_row[j]);
      ++report.checked;
      const bool pass = within_m16_tc_budget(g, r, k, row_rms);
      const double abs_err = std::fabs(static_cast<double>(g) - static_cast<double>(r));
      if (!std::isnan(abs_err)) {
        report.max_abs = std::max(report.max_abs, abs_err);
        if (floor > 0.0) {
          report.max_abs_over_floor = std::max(report.max_abs_over_floor, abs_err / floor);
        }
        if (abs_err > floor && !std::isinf(abs_err)) {
          report.max_ulp = std::max(report.max_ulp, bf16_ulp_distance(g, r));
        }
      }
      if (!pass) {
        ++report.failures;
        if (report.first_failure.empty()) {
          report.first_failure = fmt::format(
              "row {} col {}: got {} (0x{:04x}), reference {} (0x{:04x}), row rms {:.4g}", i, j,
              g, got_row[j], r, ref_row[j], row_rms);
        }
      }
    }
  }
  return report;
}

}  // namespace metrale::bench
