#include "metrale/bench/shapes.hpp"

#include <charconv>
#include <limits>
#include <vector>

#include "metrale/error.hpp"

namespace metrale::bench {

std::string Shape::label() const {
  if (model.empty()) return fmt::format("{}x{}", n, k);
  return model + " " + layer;
}

std::span<const Shape> default_shapes() {
  static const std::vector<Shape> shapes = {
      {"Llama-3-8B", "qkv", 6144, 4096},       {"Llama-3-8B", "o", 4096, 4096},
      {"Llama-3-8B", "gate_up", 28672, 4096},  {"Llama-3-8B", "down", 4096, 14336},
      {"Qwen3-32B", "qkv", 10240, 5120},       {"Qwen3-32B", "gate_up", 51200, 5120},
      {"Qwen3-32B", "down", 5120, 25600},      {"DeepSeek-V3", "q_a", 1536, 7168},
      {"DeepSeek-V3", "kv_a", 576, 7168},      {"DeepSeek-V3", "q_b", 24576, 1536},
      {"DeepSeek-V3", "o", 7168, 16384},       {"DeepSeek-V3", "gate_up", 36864, 7168},
      {"DeepSeek-V3", "down", 7168, 18432},
  };
  return shapes;
}

Shape parse_shape(std::string_view text) {
  const std::size_t x = text.find_first_of("xX");
  auto number = [&](std::string_view part, std::uint32_t& out) {
    auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), out);
    return !part.empty() && ec == std::errc() && ptr == part.data() + part.size();
  };
  Shape s;
  ensure(x != std::string_view::npos && number(text.substr(0, x), s.n) &&
             number(text.substr(x + 1), s.k),
         "--shape '{}': expected NxK, e.g. 6144x4096", text);
  ensure(s.n >= 1, "--shape '{}': N must be at least 1", text);
  ensure(s.k >= 128 && s.k % 128 == 0,
         "--shape '{}': K={} must be a positive multiple of 128 (block-scale granularity)",
         text, s.k);
  // The fill kernels index one copy with a u32 element count.
  ensure(static_cast<std::uint64_t>(s.n) * s.k <= std::numeric_limits<std::uint32_t>::max(),
         "--shape '{}': N*K exceeds 2^32-1 elements", text);
  for (const Shape& known : default_shapes()) {
    if (known.n == s.n && known.k == s.k) return known;
  }
  return s;
}

std::uint64_t block_scale_count(const Shape& s) {
  return static_cast<std::uint64_t>((s.n + 127) / 128) * (s.k / 128);
}

std::vector<Shape> shapes_or_default(const std::vector<std::string>& texts) {
  std::vector<Shape> shapes;
  for (const std::string& text : texts) shapes.push_back(parse_shape(text));
  if (shapes.empty()) shapes.assign(default_shapes().begin(), default_shapes().end());
  return shapes;
}

std::uint64_t fp8_weight_bytes(const Shape& s) {
  return static_cast<std::uint64_t>(s.n) * s.k + block_scale_count(s) * sizeof(float);
}

}  // namespace metrale::bench
