#include "metrale/oracle.hpp"

#include <bit>
#include <cmath>
#include <cstdint>

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
  return std::ldexp(1.0, -15) * std::sqrt(static_cast<double>(k) / 128.0) * row_rms;
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

}  // namespace metrale
