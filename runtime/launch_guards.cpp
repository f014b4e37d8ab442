#include "launch_guards.hpp"

#include <string>

#include "metrale/error.hpp"
#include "metrale/w8a16_gemm_m16_splitk.hpp"

namespace metrale::guards {
namespace {

void check_pointer(std::string_view fn, std::string_view name, DevicePtr p,
                   std::uint64_t alignment) {
  ensure(p.address != 0, "{}: {} is a null device pointer", fn, name);
  ensure(p.address % alignment == 0, "{}: {}=0x{:x} is not {}-byte aligned", fn, name,
         p.address, alignment);
}

// An operand's bytes: `rows` rows of `row_bytes` each, `pitch` bytes apart, from `begin`.
// A row of no bytes is none (K = 0 reads no input).
struct Rows {
  std::string_view name;
  std::uint64_t begin, rows, row_bytes, pitch;
  std::uint64_t span() const { return rows == 0 ? 0 : (rows - 1) * pitch + row_bytes; }
  std::uint64_t end() const { return begin + span(); }
  bool empty() const { return rows == 0 || row_bytes == 0; }
};

Rows rows_of(std::string_view fn, std::string_view name, DevicePtr p, std::uint64_t rows,
             std::uint64_t row_bytes, std::uint64_t pitch) {
  const Rows r{name, p.address, rows, row_bytes, pitch};
  ensure(r.span() <= ~std::uint64_t{0} - p.address,
         "{}: {}=0x{:x} with its {} bytes lies past the end of the address space", fn, name,
         p.address, r.span());
  return r;
}

bool rows_meet(const Rows& a, const Rows& b) {
  // The spans first: apart, as in every ordinary call, the rows are too.
  if (a.empty() || b.empty() || a.end() <= b.begin || b.end() <= a.begin) return false;
  // Interleaved rows (a pitch wider than the row, another operand's rows between): at most
  // 32 x 32 pairs, on this path only.
  for (std::uint64_t i = 0; i < a.rows; ++i) {
    const std::uint64_t a0 = a.begin + i * a.pitch, a1 = a0 + a.row_bytes;
    for (std::uint64_t j = 0; j < b.rows; ++j) {
      const std::uint64_t b0 = b.begin + j * b.pitch, b1 = b0 + b.row_bytes;
      if (a0 < b1 && b0 < a1) return true;
    }
  }
  return false;
}

void check_disjoint(std::string_view fn, const Rows& written, const Rows& read) {
  ensure(!rows_meet(written, read),
         "{}: {} [0x{:x}, 0x{:x}) overlaps {} [0x{:x}, 0x{:x}): the kernel would read bytes "
         "it has already written",
         fn, written.name, written.begin, written.end(), read.name, read.begin, read.end());
}

}  // namespace

void check_m_and_k(std::string_view fn, std::uint32_t m, std::uint32_t k) {
  ensure(m >= 1 && m <= 16, "{}: m={} outside 1..=16 (kernel M tile)", fn, m);
  ensure(k % 128 == 0, "{}: K={} not a multiple of 128 (block-scale granularity)", fn, k);
}

void check_blocks(std::string_view fn, std::uint32_t k) {
  ensure(k >= 128, "{}: K={} leaves no 128-K block (this entry needs K >= 128)", fn, k);
}

void check_shape(std::string_view fn, std::uint32_t m, std::uint32_t n, std::uint32_t k) {
  check_m_and_k(fn, m, k);
  check_blocks(fn, k);
  ensure(n >= 1, "{}: n=0: nothing to compute (N must be at least 1)", fn);
}

void check_strides(std::string_view fn, std::uint32_t n, std::uint32_t k,
                   std::uint32_t a_row_stride, std::uint32_t c_row_stride) {
  ensure(a_row_stride >= k && c_row_stride >= n,
         "{}: row pitches (a={}, c={}) must cover the used extents (k={}, n={})", fn,
         a_row_stride, c_row_stride, k, n);
  ensure(a_row_stride % 8 == 0,
         "{}: a_row_stride={} must keep rows 16B-aligned (cp.async stages A in 16-byte "
         "chunks)",
         fn, a_row_stride);
}

void check_split(std::string_view fn, std::uint32_t split, std::uint32_t k) {
  ensure(split >= 1 && split <= W8A16_GEMM_M16_SPLITK_MAX,
         "{}: split={} outside 1..={} (portable cluster size)", fn, split,
         W8A16_GEMM_M16_SPLITK_MAX);
  ensure(split <= k / 128, "{}: split={} exceeds the K/128={} blocks to share", fn, split,
         k / 128);
}

void check_operands(std::string_view fn, DevicePtr input, DevicePtr weight,
                    DevicePtr block_scale, DevicePtr output, const Extents& e) {
  ensure(e.n >= 1, "{}: n=0: nothing to compute (N must be at least 1)", fn);
  check_pointer(fn, "input", input, 16);
  check_pointer(fn, "weight", weight, 16);
  check_pointer(fn, "block_scale", block_scale, 4);
  check_pointer(fn, "output", output, 2);
  const Rows out = rows_of(fn, "output", output, e.m, std::uint64_t{e.n} * 2,
                           std::uint64_t{e.c_row_stride} * 2);
  check_disjoint(fn, out, rows_of(fn, "input", input, e.m, std::uint64_t{e.k} * 2,
                                  std::uint64_t{e.a_row_stride} * 2));
  const std::uint64_t weight_bytes = std::uint64_t{e.n} * e.k;
  check_disjoint(fn, out, rows_of(fn, "weight", weight, 1, weight_bytes, weight_bytes));
  const std::uint64_t scale_bytes = std::uint64_t{(e.n + 127) / 128} * (e.k / 128) * 4;
  check_disjoint(fn, out, rows_of(fn, "block_scale", block_scale, 1, scale_bytes, scale_bytes));
}

void check_call(std::string_view fn, DevicePtr input, DevicePtr weight, DevicePtr block_scale,
                DevicePtr output, std::uint32_t m, std::uint32_t n, std::uint32_t k,
                std::uint32_t a_row_stride, std::uint32_t c_row_stride) {
  check_m_and_k(fn, m, k);
  check_blocks(fn, k);
  check_strides(fn, n, k, a_row_stride, c_row_stride);
  check_operands(fn, input, weight, block_scale, output, {m, n, k, a_row_stride, c_row_stride});
}

void check_plan_workspace(std::string_view fn, std::string_view entry, std::uint64_t need,
                          DevicePtr ptr, std::uint64_t bytes, std::string_view size_function) {
  if (need == 0) return;
  ensure(ptr.address != 0 && bytes >= need,
         "{}: the plan ({}) needs a workspace of {} bytes ({}), and the caller's is {} bytes "
         "at 0x{:x}",
         fn, entry, need, size_function, bytes, ptr.address);
  ensure(ptr.address % 16 == 0,
         "{}: the plan ({}) needs a workspace, and the caller's at 0x{:x} is not 16-byte "
         "aligned",
         fn, entry, ptr.address);
}

void check_kernel(std::string_view fn, const KernelHandle& kernel,
                  std::span<const std::string_view> entries) {
  if (kernel.name == nullptr) return;
  const std::string_view name = kernel.name;
  for (std::string_view e : entries) {
    if (e == name) return;
  }
  std::string expected;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    expected += i == 0 ? "" : i + 1 == entries.size() ? " or " : ", ";
    expected += entries[i];
  }
  fail("{}: the handle is of '{}', not of {}", fn, name, expected);
}

KernelHandle build_for_tokens(std::string_view fn, const KernelHandle& kernel, std::uint32_t m) {
  if (m <= 8 || kernel.function == nullptr) return kernel;
  ensure(kernel.function_above8 != nullptr,
         "{}: m = {} needs the kernel's build for 9..16 tokens, and the handle of {} has none "
         "(take handles from ModuleCache::kernel or KernelService::kernel)",
         fn, m, kernel.name != nullptr ? kernel.name : "?");
  return above8_build(kernel);
}

}  // namespace metrale::guards
