// The register and local-memory limits each shipped kernel build keeps, checked twice:
// on ptxas's report of the sm_90 CUBIN on any build machine (host tests) and on what the
// driver reports of the loaded module on the GPU (GPU tests).
#pragma once

#include <doctest/doctest.h>

#include <string_view>

#include "metrale/w8a16_gemm_m16_skinny.hpp"

namespace metrale::test {

// `entry`'s build for m <= 8 (above8 false; a module built for every m counts as this) or
// for m in 9..16, with its registers per thread and local memory in bytes per thread.
inline void check_kernel_limits(std::string_view entry, bool above8, int registers,
                                int local_bytes) {
  CAPTURE(entry);
  CAPTURE(above8);
  CHECK(registers > 0);
  // Every GEMM build keeps everything in registers.
  if (entry.starts_with("w8a16_gemm_m16")) CHECK(local_bytes == 0);
  // The plan sizes the skinny kernels' CTAs per SM from their registers.
  const auto at_most = [&](std::uint32_t m8, std::uint32_t m16) {
    CHECK(registers <= static_cast<int>(above8 ? m16 : m8));
  };
  if (entry == "w8a16_gemm_m16_skinny_deep") {
    at_most(W8A16_GEMM_M16_SKINNY_DEEP_REGISTERS_M8, W8A16_GEMM_M16_SKINNY_DEEP_REGISTERS_M16);
  }
  if (entry == "w8a16_gemm_m16_skinny_deep32") {
    at_most(W8A16_GEMM_M16_SKINNY_DEEP32_REGISTERS, W8A16_GEMM_M16_SKINNY_DEEP32_REGISTERS);
  }
  if (entry == "w8a16_gemm_m16_skinny_deep3") {
    at_most(W8A16_GEMM_M16_SKINNY_DEEP_REGISTERS_M8, W8A16_GEMM_M16_SKINNY_DEEP3_REGISTERS_M16);
  }
  if (entry == "w8a16_gemm_m16_skinny") {
    at_most(W8A16_GEMM_M16_SKINNY_REGISTERS_M8, W8A16_GEMM_M16_SKINNY_REGISTERS_M16);
  }
  // Stream-K runs two CTAs of 288 threads per SM. A third, the next launch's under PDL,
  // must not fit beside them: in the register file it did when the 8-token build fell to
  // 72 registers (a warp's registers allocated in 256s, 65536 per SM), and its PDL forms
  // then ran 1.12-1.14x slower than without PDL on the large layers (docs/performance.md,
  // items 68 and 72).
  if (entry == "w8a16_gemm_m16_streamk") {
    const int warp_registers = (registers * 32 + 255) / 256 * 256;
    CHECK(3 * (288 / 32) * warp_registers > 65536);
  }
}

}  // namespace metrale::test
