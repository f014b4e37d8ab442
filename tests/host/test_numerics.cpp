// Number formats and the accuracy contract: the FP8 E4M3 decode over all 256 codes
// against the format's definition, BF16 rounding, the CPU emulation of the scalar
// kernel against a float64 dot product, and the budget's verdicts.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "metrale/host_reference.hpp"
#include "metrale/oracle.hpp"

using namespace metrale;

namespace {

// E4M3 "fn" straight from its definition: (-1)^s * 2^(e-7) * (1 + m/8), subnormals
// (-1)^s * 2^-6 * m/8, S.1111.111 is NaN, no infinities.
double e4m3_definition(unsigned code) {
  const unsigned s = code >> 7, e = (code >> 3) & 15u, m = code & 7u;
  if (e == 15 && m == 7) return std::nan("");
  const double sign = s != 0 ? -1.0 : 1.0;
  if (e == 0) return sign * std::pow(2.0, -6) * (m / 8.0);
  return sign * std::pow(2.0, static_cast<int>(e) - 7) * (1.0 + m / 8.0);
}

}  // namespace

TEST_CASE("FP8 E4M3 decode: all 256 codes against the definition") {
  int nan_codes = 0;
  for (unsigned code = 0; code < 256; ++code) {
    CAPTURE(code);
    const double want = e4m3_definition(code);
    const float via_float = fp8_e4m3_to_float(static_cast<std::uint8_t>(code));
    const float via_bf16 = bf16_to_float(fp8_e4m3_to_bf16_bits(static_cast<std::uint8_t>(code)));
    if (std::isnan(want)) {
      ++nan_codes;
      CHECK(std::isnan(via_float));
      CHECK(std::isnan(via_bf16));
    } else {
      CHECK(static_cast<double>(via_float) == want);
      CHECK(static_cast<double>(via_bf16) == want);
      CHECK(std::signbit(via_bf16) == ((code & 0x80u) != 0));
    }
  }
  CHECK(nan_codes == 2);
  CHECK(fp8_e4m3_to_float(0x7E) == 448.0f);
  CHECK(fp8_e4m3_to_float(0x01) == std::ldexp(1.0f, -9));
}

TEST_CASE("BF16 round to nearest even") {
  CHECK(float_to_bf16_rn(1.0f) == 0x3F80);
  CHECK(float_to_bf16_rn(std::bit_cast<float>(0x3F808000u)) == 0x3F80);  // tie -> even
  CHECK(float_to_bf16_rn(std::bit_cast<float>(0x3F818000u)) == 0x3F82);  // tie -> even
  CHECK(float_to_bf16_rn(std::bit_cast<float>(0x3F808001u)) == 0x3F81);
  CHECK(float_to_bf16_rn(-2.0f) == 0xC000);
  CHECK(std::isnan(bf16_to_float(float_to_bf16_rn(std::nanf("")))));
  CHECK(float_to_bf16_rn(std::bit_cast<float>(0x7F7FFFFFu)) == 0x7F80);  // overflow -> inf
}

TEST_CASE("the CPU emulation of the scalar kernel tracks a float64 dot product") {
  std::mt19937 rng(7);
  const std::uint32_t m = 3, n = 200, k = 512;
  std::vector<std::uint16_t> x(m * k);
  std::vector<std::uint8_t> w(std::size_t{n} * k);
  std::vector<float> s(2 * (k / 128));
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  for (auto& v : x) v = float_to_bf16_rn(unit(rng));
  for (auto& v : w) {
    v = static_cast<std::uint8_t>(rng() % 256);
    if ((v & 0x7F) == 0x7F) v = 0x10;
  }
  for (auto& v : s) v = std::ldexp(1.0f + unit(rng) * 0.5f, -8);
  const GemvOperands op{x.data(), w.data(), s.data(), m, n, k, k};
  for (std::uint32_t i = 0; i < m; ++i) {
    for (std::uint32_t j = 0; j < n; j += 17) {
      double exact = 0.0, magnitude = 0.0;
      for (std::uint32_t kk = 0; kk < k; ++kk) {
        const double term = static_cast<double>(s[(j / 128) * (k / 128) + kk / 128]) *
                            fp8_e4m3_to_float(w[std::size_t{j} * k + kk]) * bf16_to_float(x[i * k + kk]);
        exact += term;
        magnitude += std::fabs(term);
      }
      const float got = cpu_w8a16_gemv_fp32(op, i, j);
      CHECK(std::fabs(got - exact) <= 1e-6 * magnitude + 1e-30);
    }
  }
}

TEST_CASE("budget: ULP distance, floor, NaN") {
  const float one = 1.0f;
  const float up1 = bf16_to_float(0x3F81), up2 = bf16_to_float(0x3F82), up3 = bf16_to_float(0x3F83);
  CHECK(bf16_ulp_distance(one, up2) == 2);
  CHECK(bf16_ulp_distance(bf16_to_float(0x0001), bf16_to_float(0x8001)) == 2);  // across 0
  CHECK(within_m16_tc_budget(up1, one, 128, 0.0));
  CHECK(within_m16_tc_budget(up2, one, 128, 0.0));
  CHECK_FALSE(within_m16_tc_budget(up3, one, 128, 0.0));
  // Near zero the floor decides: 8 * 2^-24 * sqrt(K) * row_rms.
  CHECK(m16_tc_acc_floor(512, 1.0) == std::ldexp(1.0, -21) * std::sqrt(512.0));
  CHECK(m16_tc_acc_floor(4096, 2.0) == std::ldexp(1.0, -14));
  const float tiny = std::ldexp(1.0f, -23);  // |2 tiny| = 2^-22 under 2^-14 at K = 4096
  CHECK(within_m16_tc_budget(tiny, -tiny, 4096, 2.0));
  CHECK_FALSE(within_m16_tc_budget(tiny, -tiny, 4096, 1e-6));
  // 1.0e-4 against 0 at K = 4096 and RMS 1: the floor is 3.05e-5, the outputs 14546 ULP
  // apart, so it fails (a floor of 2^-15 * sqrt(K / 128) would have passed it).
  CHECK_FALSE(within_m16_tc_budget(bf16_to_float(0x38D2), 0.0f, 4096, 1.0));
  CHECK_FALSE(within_m16_tc_budget(std::nanf(""), 1.0f, 128, 1.0));
  CHECK_FALSE(within_m16_tc_budget(1.0f, std::nanf(""), 128, 1.0));
  CHECK_FALSE(within_m16_tc_budget(std::nanf(""), std::nanf(""), 128, 1.0));
}
