#include "metrale/host_reference.hpp"

#include <bit>
#include <cmath>
#include <limits>

namespace metrale {

float fp8_e4m3_to_float(std::uint8_t code) {
  const bool negative = (code & 0x80u) != 0;
  const unsigned exponent = (code >> 3) & 0xFu;
  const unsigned mantissa = code & 0x7u;
  float magnitude;
  if (exponent == 0xFu && mantissa == 0x7u) {
    magnitude = std::numeric_limits<float>::quiet_NaN();
  } else if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa) / 8.0f, -6);
  } else {
    magnitude = std::ldexp(1.0f + static_cast<float>(mantissa) / 8.0f,
                           static_cast<int>(exponent) - 7);
  }
  return negative ? -magnitude : magnitude;
}

// Mirrors fp8_e4m3_to_bf16_int in kernel_sources/metrale_device.cuh.
std::uint16_t fp8_e4m3_to_bf16_bits(std::uint8_t code) {
  const std::uint32_t sign = (code & 0x80u) << 8;
  const std::uint32_t mag = code & 0x7Fu;
  std::uint32_t bits;
  if (mag == 0x7Fu) {
    bits = 0x7FC0u;
  } else if (mag >= 8u) {
    bits = (mag << 4) + (120u << 7);
  } else {
    bits = std::bit_cast<std::uint32_t>(static_cast<float>(mag) * 0.001953125f) >> 16;
  }
  return static_cast<std::uint16_t>(sign | bits);
}

float bf16_to_float(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

std::uint16_t float_to_bf16_rn(float value) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(value);
  if (std::isnan(value)) return static_cast<std::uint16_t>((u >> 16) | 0x0040u);
  const std::uint32_t rounding = 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>((u + rounding) >> 16);
}

float cpu_w8a16_gemv_fp32(const GemvOperands& op, std::uint32_t i, std::uint32_t j) {
  constexpr std::uint32_t kBlockK = 128;
  const std::uint32_t k_blocks = op.k / kBlockK;
  const std::uint8_t* w = op.weight + static_cast<std::size_t>(j) * op.k;
  const std::uint16_t* x = op.input + static_cast<std::size_t>(i) * op.a_row_stride;
  const float* s = op.block_scale + static_cast<std::size_t>(j / kBlockK) * k_blocks;
  float acc = 0.0f;
  for (std::uint32_t b = 0; b < k_blocks; ++b) {
    float p = 0.0f;
    for (std::uint32_t kk = b * kBlockK; kk < (b + 1) * kBlockK; ++kk) {
      p = std::fma(bf16_to_float(fp8_e4m3_to_bf16_bits(w[kk])), bf16_to_float(x[kk]), p);
    }
    acc = std::fma(s[b], p, acc);
  }
  return acc;
}

std::uint16_t cpu_w8a16_gemv(const GemvOperands& op, std::uint32_t i, std::uint32_t j) {
  return float_to_bf16_rn(cpu_w8a16_gemv_fp32(op, i, j));
}

}  // namespace metrale
