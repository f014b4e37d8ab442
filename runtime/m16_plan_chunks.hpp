// The rules by which plan_m16_gemm (m16_plan.cpp) runs the deep skinny
// entry in chunks of K, with the caller's workspace; each definition carries the
// measurements it rests on (docs/performance.md, the items it names).
#pragma once

#include <cstdint>
#include <optional>

#include "metrale/m16_plan.hpp"
#include "metrale/w8a16_gemm_m16_skinny.hpp"

namespace metrale::m16_plan {

inline constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
inline constexpr std::uint64_t kLargeLayerBytes = 64 * kMiB;  // where stream-K's rules start

// The deep entry in chunks of K on 8 warps of 2 blocks each, the form of
// chunked_deep_if_suited, of chunked_deep_without_pdl_if_suited under 16 MiB and the first
// of chunked_deep_narrow_with_pdl_if_suited: its chunks of K, its CTAs (row groups x
// chunks) and the CTA slots of `sms` SMs at m tokens. (m16_plan_chunks.cpp fills the same
// three fields for the other forms; kWarps and kBlocks name this one's.)
struct SmallChunkGrid {
  static constexpr std::uint32_t kWarps = 8;
  static constexpr std::uint32_t kBlocks = 2;
  std::uint32_t chunks;
  std::uint64_t ctas;
  std::uint64_t slots;
};

SmallChunkGrid small_chunk_grid(std::uint32_t m, std::uint32_t n, std::uint32_t k,
                                std::uint32_t sms);

// Under 16 MiB up to 8 tokens, whether the deep entry's one-chunk form `form` suits.
bool small_layer_one_chunk_suits(std::uint32_t m, std::uint32_t n, std::uint32_t k,
                                 std::uint32_t sms, bool pdl, const SkinnyDeepForm& form);

// With PDL, under 16 MiB up to 8 tokens: 8 warps of 2 blocks.
std::optional<M16Plan> chunked_deep_if_suited(std::uint32_t m, std::uint32_t n, std::uint32_t k,
                                              std::uint32_t sms, bool pdl);

// Above 8 tokens, with or without PDL, on narrow layers: 4 warps of 4 or 8 blocks.
std::optional<M16Plan> chunked_deep_above_8_tokens(std::uint32_t m, std::uint32_t n,
                                                   std::uint32_t k, std::uint32_t sms,
                                                   bool pdl);

// Without PDL up to 8 tokens, on narrow, deep layers and under 16 MiB at K of 4096-7168.
// `one_chunk`: w8a16_gemm_m16_skinny_deep_form of the shape.
std::optional<M16Plan> chunked_deep_without_pdl_if_suited(std::uint32_t m, std::uint32_t n,
                                                          std::uint32_t k, std::uint32_t sms,
                                                          bool pdl,
                                                          const SkinnyDeepForm& one_chunk);

// With PDL up to 8 tokens, on narrow, deep layers of 16-64 MiB.
std::optional<M16Plan> chunked_deep_narrow_with_pdl_if_suited(std::uint32_t m, std::uint32_t n,
                                                             std::uint32_t k, std::uint32_t sms,
                                                             bool pdl,
                                                             const SkinnyDeepForm& one_chunk);

}  // namespace metrale::m16_plan
