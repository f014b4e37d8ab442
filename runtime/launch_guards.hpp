// Argument checks shared by every W8A16 launcher. Each throws metrale::Error naming the
// launcher and the offending values; a launcher calls them all before it launches.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "metrale/gpu_backend.hpp"

namespace metrale::guards {

// The seed's first two guards: m in 1..=16, K a multiple of 128.
void check_m_and_k(std::string_view fn, std::uint32_t m, std::uint32_t k);

// What the entries past the seed's need of K: at least one 128-K block (the seed's
// kernels write zeros for K = 0; a grid over K's blocks would have no CTA).
void check_blocks(std::string_view fn, std::uint32_t k);

// A shape that a plan is made for: check_m_and_k, check_blocks and n >= 1.
void check_shape(std::string_view fn, std::uint32_t m, std::uint32_t n, std::uint32_t k);

// The seed's strided guards: pitches cover the extents, a_row_stride a multiple of 8.
void check_strides(std::string_view fn, std::uint32_t n, std::uint32_t k,
                   std::uint32_t a_row_stride, std::uint32_t c_row_stride);

// The split-K entries' K split: 1..=W8A16_GEMM_M16_SPLITK_MAX (a portable cluster), and
// at most one CTA per 128-K block.
void check_split(std::string_view fn, std::uint32_t split, std::uint32_t k);

// The extents of a launch's operands: m rows of input k wide at a pitch of a_row_stride
// elements, m rows of output n wide at c_row_stride; weight [n, k], block_scale
// [ceil(n / 128), k / 128].
struct Extents {
  std::uint32_t m, n, k, a_row_stride, c_row_stride;
};

// What the seed leaves to the kernel: n == 0, null pointers, alignment (16 bytes for
// input and weight, read in 16-byte pieces; 4 for block_scale; 2 for output), and an
// output whose bytes overlap those the kernel reads: its CTAs would read what others have
// already written. Rows interleaved at wider pitches are apart where their bytes are. The
// inputs may overlap each other (they are only read). m may exceed 16 (a caller's whole
// call over several launches).
void check_operands(std::string_view fn, DevicePtr input, DevicePtr weight,
                    DevicePtr block_scale, DevicePtr output, const Extents& extents);

// The checks of a call that may run any entry (the automatic choice), in the launchers'
// order: check_m_and_k, check_blocks, check_strides, check_operands.
void check_call(std::string_view fn, DevicePtr input, DevicePtr weight, DevicePtr block_scale,
                DevicePtr output, std::uint32_t m, std::uint32_t n, std::uint32_t k,
                std::uint32_t a_row_stride, std::uint32_t c_row_stride);

// A planned launch's workspace (at `ptr`, `bytes` long) where the plan of `entry` needs
// `need` bytes (none when 0): not null, 16-byte aligned, large enough; `size_function` is
// what the message names for the size the caller should have asked.
void check_plan_workspace(std::string_view fn, std::string_view entry, std::uint64_t need,
                          DevicePtr ptr, std::uint64_t bytes, std::string_view size_function);

// The handle's entry, where it names one (the module cache's handles do), is one of
// `entries`, the entries of the kernel the launcher runs: another kernel takes other
// arguments or another grid. A handle without a name, made by the caller, is taken as it
// is, as the seed's launchers take any.
void check_kernel(std::string_view fn, const KernelHandle& kernel,
                  std::span<const std::string_view> entries);

// The entries of the seed's strided kernel: the contiguous 32-wide entry, the strided one
// and split-K.
inline constexpr std::array<std::string_view, 3> kStridedKernelEntries = {
    "w8a16_gemm_m16", "w8a16_gemm_m16_strided", "w8a16_gemm_m16_splitk"};

// The build of a token-split entry (kernel_variants.hpp) that serves m tokens: `kernel`
// for m <= 8, its function_above8 for m > 8. A handle without function_above8 (not from
// a ModuleCache) cannot serve m > 8: that is an error, never a launch of the 8-token build.
KernelHandle build_for_tokens(std::string_view fn, const KernelHandle& kernel, std::uint32_t m);

}  // namespace metrale::guards
