// Host-side numerics: the FP8 E4M3 ("fn") and BF16 formats, and the CPU emulation of
// the scalar reference kernel (w8a16_gemv_batch16), operation for operation, so that
// the two agree bit for bit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace metrale {

// E4M3 "fn": 1 sign, 4 exponent (bias 7), 3 mantissa bits; no infinities; 0x7F and
// 0xFF are NaN; subnormals are m/8 * 2^-6.
float fp8_e4m3_to_float(std::uint8_t code);

// The BF16 bits of an E4M3 code as the kernels' integer decode forms them (exact:
// every E4M3 value is representable in BF16; NaN codes give a quiet NaN).
std::uint16_t fp8_e4m3_to_bf16_bits(std::uint8_t code);

float bf16_to_float(std::uint16_t bits);

// Round to nearest even, as cvt.rn.bf16.f32; NaN stays NaN.
std::uint16_t float_to_bf16_rn(float value);

// Operand layout shared by the reference implementations.
struct GemvOperands {
  const std::uint16_t* input;   // [m, a_row_stride] BF16 bits
  const std::uint8_t* weight;   // [n, k] FP8 E4M3
  const float* block_scale;     // [ceil(n/128), k/128]
  std::uint32_t m, n, k;
  std::size_t a_row_stride;     // elements
};

// The FP32 value the scalar kernel rounds for (row i, column j).
float cpu_w8a16_gemv_fp32(const GemvOperands& op, std::uint32_t i, std::uint32_t j);

// The BF16 bits the scalar kernel writes for (row i, column j).
std::uint16_t cpu_w8a16_gemv(const GemvOperands& op, std::uint32_t i, std::uint32_t j);

}  // namespace metrale
