// The callers of the M16 tensor-core GEMM: the dense-FFN selection by
// METRALE_FFN_M16_TC_NTILE, the 1..=32-row dense-FFN call, the strided multi-sequence
// QKV projection, and the per-target levers that gate them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "metrale/gpu_backend.hpp"
#include "metrale/module_cache.hpp"
#include "metrale/w8a16_gemm_m16.hpp"

namespace metrale {

// Booleans a GPU target declares: whether its dense FFN / attention projections take
// the M16 tensor-core path.
struct TargetLevers {
  bool ffn_m16_tc = false;
  bool attn_m16_tc = false;
};

// The levers of a compile target ("sm_90"): on for every target with BF16 tensor cores
// (sm_80 and newer), off otherwise.
TargetLevers target_levers(std::string_view target);

// The contiguous launcher and its kernel handle for the dense FFN.
struct M16TcKernel {
  ContiguousM16Gemm launcher;
  KernelHandle kernel;
  std::uint32_t n_tile;
};

// METRALE_FFN_M16_TC_NTILE unset or "32" -> w8a16_gemm_m16, "64" -> w8a16_gemm_m16_n64;
// anything else throws Error naming the variable, its value and the accepted values.
M16TcKernel m16_tc_kernel(ModuleCache& cache);

// The same selection for an explicit value of the variable (nullopt = unset).
M16TcKernel m16_tc_kernel(ModuleCache& cache, std::optional<std::string_view> ntile_value);

// The N tile that selection picks (32 or 64) without compiling anything; throws the same
// Error for a value it does not accept.
std::uint32_t m16_tc_n_tile(std::optional<std::string_view> ntile_value);

// The contiguous launcher and kernel entry of an N tile: 32 -> w8a16_gemm_m16,
// 64 -> w8a16_gemm_m16_n64; throws Error for any other tile.
struct M16TcEntry {
  ContiguousM16Gemm launcher;
  const char* entry;
};
M16TcEntry m16_tc_entry(std::uint32_t n_tile);

// The value of METRALE_FFN_M16_TC_NTILE (nullopt when unset), read at each call.
std::optional<std::string> m16_tc_ntile_env();

// Rows per dense-FFN call: 17..=32 rows run the launcher twice on contiguous halves, the
// first ceil(rows / 2) rows, then the rest.
inline constexpr std::uint32_t DENSE_FFN_M16_TC_MAX_ROWS = 32;

// Dense FFN projection for 1..=32 rows. Throws Error when the target's ffn_m16_tc lever
// is off, for rows outside 1..=32, for a selection whose launcher is not its tile's, or
// for operands either half refuses (nothing launched). Where the backend fails the second
// half's launch, the first half is already queued.
void dense_ffn_m16_tc(const M16TcKernel& selected, const TargetLevers& levers,
                      const GpuBackend& gpu, DevicePtr input, DevicePtr weight,
                      DevicePtr block_scale, DevicePtr output, std::uint32_t rows,
                      std::uint32_t n, std::uint32_t k, StreamHandle stream);

// One projection (Q, K or V) of the multi-sequence decode QKV buffer
// [n_seq, per_seq_qkv]: writes rows 0..n_seq of the slot starting at column
// `slot_offset` with width `slot_width`. Gated by the attn_m16_tc lever.
struct QkvSlot {
  std::uint32_t offset;  // first column of the slot in each row
  std::uint32_t width;   // N of the projection
};
void qkv_projection_m16_tc(const TargetLevers& levers, const GpuBackend& gpu,
                           KernelHandle strided_kernel, DevicePtr input,
                           std::uint32_t input_row_stride, DevicePtr weight,
                           DevicePtr block_scale, DevicePtr qkv, std::uint32_t per_seq_qkv,
                           QkvSlot slot, std::uint32_t n_seq, std::uint32_t k,
                           StreamHandle stream);

}  // namespace metrale
