#include "metrale/oracle.hpp"

#include <bit>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "metrale/host_reference.hpp"

namespace metrale {
namespace {

// BF16 bits mapped to integers that increase with the value (-0 and +0 coincide).
std::int32_t ordered(float v) {
  const auto bits = static_cast<std::int32_t>(float_to_bf16_rn(v));
  return (bits & 0x8000) != 0 ? -(bits & 0x7FFF) : bits;
}

}  // namespace

double m16_tc_acc_floor(std::uint32_t k, double row_rms) {
  return M16_TC_ACC_FLOOR_MARGIN * F32_UNIT_ROUNDOFF * std::sqrt(static_cast<double>(k)) *
         row_rms;
}

std::uint32_t bf16_ulp_distance(float a, float b) {
  const std::int64_t d = static_cast<std::int64_t>(ordered(a)) - ordered(b);
  return static_cast<std::uint32_t>(d < 0 ? -d : d);
}

bool within_m16_tc_budget(float got, float ref, std::uint32_t k, double row_rms) {
  if (std::isnan(got) || std::isnan(ref)) return false;
  if (std::isinf(got) || std::isinf(ref)) return got == ref;
  const double abs_err = std::fabs(static_cast<double>(got) - static_cast<double>(ref));
  if (abs_err <= m16_tc_acc_floor(k, row_rms)) return true;
  return bf16_ulp_distance(got, ref) <= M16_TC_MAX_ULP;
}

void BudgetReport::merge(const BudgetReport& other) {
  if (first_failure.empty()) first_failure = other.first_failure;
  checked += other.checked;
  failures += other.failures;
  max_ulp = std::max(max_ulp, other.max_ulp);
  max_abs = std::max(max_abs, other.max_abs);
  max_abs_over_floor = std::max(max_abs_over_floor, other.max_abs_over_floor);
}

void check_row_budget(BudgetReport& b, const std::uint16_t* got, const std::uint16_t* ref,
                      std::uint32_t n, std::uint32_t k, std::uint32_t row) {
  double sum_sq = 0.0;
  for (std::uint32_t j = 0; j < n; ++j) {
    const double r = bf16_to_float(ref[j]);
    sum_sq += r * r;
  }
  const double row_rms = n > 0 ? std::sqrt(sum_sq / n) : 0.0;
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

}  // namespace metrale
