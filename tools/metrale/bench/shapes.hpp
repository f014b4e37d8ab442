// The GEMM shapes the benchmark measures: the decode projections of block-FP8
// checkpoints that matter (shared/spec/README.md), or NxK given on the command line.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace metrale::bench {

struct Shape {
  std::string model;  // empty for a shape given on the command line
  std::string layer;
  std::uint32_t n = 0;
  std::uint32_t k = 0;

  std::string label() const;  // "Llama-3-8B qkv" or "6144x4096"
};

// The 13 shapes of the spec, in its order.
std::span<const Shape> default_shapes();

// "NxK" -> Shape; a known N x K gets its model and layer names. Throws Error when the
// text is malformed or K is not a multiple of 128 (the block-scale granularity).
Shape parse_shape(std::string_view text);

// The shapes of the command line's --shape values (`texts`, parsed as parse_shape does),
// or the default shapes where there are none.
std::vector<Shape> shapes_or_default(const std::vector<std::string>& texts);

// Bytes one launch must stream: FP8 weights [N, K] plus FP32 block scales
// [ceil(N/128), K/128].
std::uint64_t fp8_weight_bytes(const Shape& s);
std::uint64_t block_scale_count(const Shape& s);

}  // namespace metrale::bench
