#include "metrale/dense_ffn.hpp"

#include <cstdlib>
#include <string>
#include <string_view>

#include "launch_guards.hpp"
#include "metrale/error.hpp"
#include "metrale/log.hpp"
#include "metrale/nvrtc_compiler.hpp"

namespace metrale {

TargetLevers target_levers(std::string_view target) {
  const std::string t = normalize_target(target);
  const int cc = std::stoi(t.substr(3));
  const bool bf16_tensor_cores = cc >= 80;
  return TargetLevers{bf16_tensor_cores, bf16_tensor_cores};
}

std::uint32_t m16_tc_n_tile(std::optional<std::string_view> ntile_value) {
  std::uint32_t n_tile = 0;
  if (!ntile_value || *ntile_value == "32") {
    n_tile = W8A16_GEMM_M16_N_TILE;
  } else if (*ntile_value == "64") {
    n_tile = W8A16_GEMM_M16_N_TILE_WIDE;
  } else {
    fail("METRALE_FFN_M16_TC_NTILE='{}' is not an accepted value (accepted: unset, 32, 64)",
         *ntile_value);
  }
  logger()->debug("dense FFN: N tile {} (METRALE_FFN_M16_TC_NTILE: {})", n_tile,
                  ntile_value.value_or("unset"));
  return n_tile;
}

std::optional<std::string> m16_tc_ntile_env() {
  // A copy: the environment's own string may change with a later setenv.
  const char* value = std::getenv("METRALE_FFN_M16_TC_NTILE");
  return value != nullptr ? std::optional<std::string>(value) : std::nullopt;
}

M16TcEntry m16_tc_entry(std::uint32_t n_tile) {
  if (n_tile == W8A16_GEMM_M16_N_TILE) return {&w8a16_gemm_m16, "w8a16_gemm_m16"};
  if (n_tile == W8A16_GEMM_M16_N_TILE_WIDE) return {&w8a16_gemm_m16_n64, "w8a16_gemm_m16_n64"};
  fail("dense FFN N tile {} does not exist (the dense FFN has {} and {})", n_tile,
       W8A16_GEMM_M16_N_TILE, W8A16_GEMM_M16_N_TILE_WIDE);
}

M16TcKernel m16_tc_kernel(ModuleCache& cache, std::optional<std::string_view> ntile_value) {
  const std::uint32_t n_tile = m16_tc_n_tile(ntile_value);
  const M16TcEntry e = m16_tc_entry(n_tile);
  return {e.launcher, cache.kernel(e.entry), n_tile};
}

M16TcKernel m16_tc_kernel(ModuleCache& cache) { return m16_tc_kernel(cache, m16_tc_ntile_env()); }

void dense_ffn_m16_tc(const M16TcKernel& selected, const TargetLevers& levers,
                      const GpuBackend& gpu, DevicePtr input, DevicePtr weight,
                      DevicePtr block_scale, DevicePtr output, std::uint32_t rows,
                      std::uint32_t n, std::uint32_t k, StreamHandle stream) {
  ensure(levers.ffn_m16_tc, "dense_ffn_m16_tc: the target's ffn_m16_tc lever is off");
  ensure(rows >= 1 && rows <= DENSE_FFN_M16_TC_MAX_ROWS,
         "dense_ffn_m16_tc: rows={} outside 1..={}", rows, DENSE_FFN_M16_TC_MAX_ROWS);
  // The selection is a public struct: its tile and launcher must be one of the two pairs
  // the selection makes, whatever the row count (m16_tc_entry refuses another tile).
  ensure(m16_tc_entry(selected.n_tile).launcher == selected.launcher,
         "dense_ffn_m16_tc: the selection's launcher is not the one of its N tile {}",
         selected.n_tile);
  if (rows <= 16) {
    selected.launcher(gpu, selected.kernel, input, weight, block_scale, output, rows, n, k,
                      stream);
    return;
  }
  // 17..=32 rows: two launches on contiguous halves (the kernel's M tile is 16 rows), the
  // odd row in the first, as the engine's dense FFN splits them (17 -> 9 + 8).
  const std::uint32_t first = (rows + 1) / 2;
  const std::uint32_t second = rows - first;
  const DevicePtr input_2 = input + std::uint64_t{first} * k * 2;
  const DevicePtr output_2 = output + std::uint64_t{first} * n * 2;
  // Both halves are checked, as their launchers will check them, before the first is
  // launched: a bad call launches nothing. The second half has no more rows than the
  // first and the same kernel, and its rows are the whole call's past the first half's:
  // the whole call's operands, checked once, cover both halves' pointers and extents, and
  // an overlap across them (the first launch's output over the second's input).
  const std::string_view fn = m16_tc_entry(selected.n_tile).entry;
  guards::check_m_and_k(fn, first, k);
  guards::check_operands(fn, input, weight, block_scale, output, {rows, n, k, k, n});
  selected.launcher(gpu, selected.kernel, input, weight, block_scale, output, first, n, k,
                    stream);
  selected.launcher(gpu, selected.kernel, input_2, weight, block_scale, output_2, second, n, k,
                    stream);
}

void qkv_projection_m16_tc(const TargetLevers& levers, const GpuBackend& gpu,
                           KernelHandle strided_kernel, DevicePtr input,
                           std::uint32_t input_row_stride, DevicePtr weight,
                           DevicePtr block_scale, DevicePtr qkv, std::uint32_t per_seq_qkv,
                           QkvSlot slot, std::uint32_t n_seq, std::uint32_t k,
                           StreamHandle stream) {
  ensure(levers.attn_m16_tc, "qkv_projection_m16_tc: the target's attn_m16_tc lever is off");
  ensure(std::uint64_t{slot.offset} + slot.width <= per_seq_qkv,
         "qkv_projection_m16_tc: slot [{}, {}) exceeds the row width per_seq_qkv={}",
         slot.offset, std::uint64_t{slot.offset} + slot.width, per_seq_qkv);
  // The launcher checks the slot's first column, not qkv itself: a null qkv with an
  // offset would pass as a small non-null pointer.
  ensure(qkv.address != 0, "qkv_projection_m16_tc: qkv is a null device pointer");
  ensure(qkv.address + std::uint64_t{slot.offset} * 2 >= qkv.address,
         "qkv_projection_m16_tc: qkv=0x{:x} plus the slot's offset {} lies past the end of "
         "the address space",
         qkv.address, slot.offset);
  // Row pitch per_seq_qkv; the output starts at the slot's first column.
  w8a16_gemm_m16_strided(gpu, strided_kernel, input, weight, block_scale,
                         qkv + std::uint64_t{slot.offset} * 2, n_seq, slot.width, k,
                         input_row_stride, per_seq_qkv, stream);
}

}  // namespace metrale
