// The callers of the seed's launchers: the dense FFN's N-tile selection by
// METRALE_FFN_M16_TC_NTILE and its 17..32 rows as two launches, the multi-sequence QKV
// projection's strided launch, and the target levers that gate both.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <tuple>

#include "metrale/dense_ffn.hpp"
#include "metrale/error.hpp"
#include "metrale/w8a16_gemm_m16.hpp"
#include "support/launcher_fixture.hpp"

using namespace metrale;

namespace {

using test::kIn, test::kW, test::kS, test::kOut;
using Fixture = test::LauncherFixture;
using test::error_of;

}  // namespace

TEST_CASE("m16_tc_kernel: METRALE_FFN_M16_TC_NTILE unset / 32 / 64 / junk") {
  Fixture f;
  const M16TcKernel unset = m16_tc_kernel(f.cache, std::nullopt);
  CHECK((unset.launcher == &w8a16_gemm_m16));
  CHECK(std::string(unset.kernel.name) == "w8a16_gemm_m16");
  CHECK(unset.n_tile == 32);
  const M16TcKernel t32 = m16_tc_kernel(f.cache, "32");
  CHECK((t32.launcher == &w8a16_gemm_m16));
  const M16TcKernel t64 = m16_tc_kernel(f.cache, "64");
  CHECK((t64.launcher == &w8a16_gemm_m16_n64));
  CHECK(std::string(t64.kernel.name) == "w8a16_gemm_m16_n64");
  CHECK(t64.n_tile == 64);
  for (const char* junk : {"48", "", "64 ", "sixty-four"}) {
    CAPTURE(junk);
    CHECK(error_of([&] { m16_tc_kernel(f.cache, junk); }) ==
          fmt::format("METRALE_FFN_M16_TC_NTILE='{}' is not an accepted value (accepted: "
                      "unset, 32, 64)",
                      junk));
  }
}

TEST_CASE("dense FFN: 1..16 rows one launch, 17..32 rows two launches on row halves") {
  Fixture f;
  const M16TcKernel sel = m16_tc_kernel(f.cache, "64");
  const TargetLevers on{true, true};
  const std::uint32_t n = 4096, k = 1024;
  dense_ffn_m16_tc(sel, on, f.gpu, kIn, kW, kS, kOut, 9, n, k, 0);
  dense_ffn_m16_tc(sel, on, f.gpu, kIn, kW, kS, kOut, 24, n, k, 0);
  dense_ffn_m16_tc(sel, on, f.gpu, kIn, kW, kS, kOut, 17, n, k, 0);
  const auto l = f.gpu.launches();
  REQUIRE(l.size() == 5);
  CHECK(l[0].u32_arg(4) == 9);
  // 24 rows: 12 + 12; 17 rows: 9 + 8, the odd row in the first half.
  for (const auto& [i, first, second] : {std::tuple{1, 12u, 12u}, std::tuple{3, 9u, 8u}}) {
    CHECK(l[i].u32_arg(4) == first);
    CHECK(l[i].u64_arg(0) == kIn.address);
    CHECK(l[i].u64_arg(3) == kOut.address);
    CHECK(l[i + 1].u32_arg(4) == second);
    CHECK(l[i + 1].u64_arg(0) == kIn.address + std::uint64_t{first} * k * 2);
    CHECK(l[i + 1].u64_arg(3) == kOut.address + std::uint64_t{first} * n * 2);
    CHECK(l[i + 1].config.grid.x == n / 64);
  }

  CHECK(error_of([&] { dense_ffn_m16_tc(sel, on, f.gpu, kIn, kW, kS, kOut, 33, n, k, 0); }) ==
        "dense_ffn_m16_tc: rows=33 outside 1..=32");
  CHECK(error_of([&] {
          dense_ffn_m16_tc(sel, TargetLevers{false, true}, f.gpu, kIn, kW, kS, kOut, 4, n, k, 0);
        }) == "dense_ffn_m16_tc: the target's ffn_m16_tc lever is off");
  // Every check of both halves comes before the first launch: nothing is launched, and
  // a bad K gets the seed's message.
  CHECK(error_of([&] { dense_ffn_m16_tc(sel, on, f.gpu, kIn, kW, kS, kOut, 20, n, 100, 0); })
            .starts_with("w8a16_gemm_m16_n64: K=100 not a multiple of 128"));
  CHECK(error_of([&] {
          dense_ffn_m16_tc(sel, on, f.gpu, DevicePtr{0}, kW, kS, kOut, 20, n, k, 0);
        }).find("input is a null device pointer") != std::string::npos);
  // The second half's rows past the end of the address space: a wrapped pointer is not
  // launched, for input or output.
  const DevicePtr late_out{0 - std::uint64_t{9} * n * 2};
  const DevicePtr late_in{0 - std::uint64_t{9} * k * 2};
  CHECK(error_of([&] { dense_ffn_m16_tc(sel, on, f.gpu, kIn, kW, kS, late_out, 17, n, k, 0); })
            .find("past the end of the address space") != std::string::npos);
  CHECK(error_of([&] { dense_ffn_m16_tc(sel, on, f.gpu, late_in, kW, kS, kOut, 17, n, k, 0); })
            .find("past the end of the address space") != std::string::npos);
  // The halves' operands are checked across the halves too: an output laid over the
  // second half's input would be written by the first launch before the second reads it.
  CHECK(error_of([&] {
          dense_ffn_m16_tc(sel, on, f.gpu, kIn, kW, kS,
                           DevicePtr(kIn.address + std::uint64_t{10} * k * 2), 20, n, k, 0);
        }).find("overlaps input") != std::string::npos);
  // The selection is a public struct: a tile without a kernel, or a launcher that is not
  // its tile's, is refused at any row count.
  for (const std::uint32_t rows : {4u, 20u}) {
    CAPTURE(rows);
    CHECK(error_of([&] {
            dense_ffn_m16_tc({sel.launcher, sel.kernel, 48}, on, f.gpu, kIn, kW, kS, kOut, rows,
                             n, k, 0);
          }).starts_with("dense FFN N tile 48 does not exist"));
    CHECK(error_of([&] {
            dense_ffn_m16_tc({&w8a16_gemm_m16, sel.kernel, 64}, on, f.gpu, kIn, kW, kS, kOut,
                             rows, n, k, 0);
          }) == "dense_ffn_m16_tc: the selection's launcher is not the one of its N tile 64");
  }
  CHECK(f.gpu.launches().size() == 5);
}

TEST_CASE("QKV projection: one strided launch writing its slot of each row") {
  Fixture f;
  const KernelHandle ks = f.cache.kernel("w8a16_gemm_m16_strided");
  const TargetLevers on{true, true};
  const std::uint32_t q = 4096, kv = 1024, per_seq = q + 2 * kv, k = 4096;
  qkv_projection_m16_tc(on, f.gpu, ks, kIn, k, kW, kS, kOut, per_seq, QkvSlot{q, kv}, 5, k, 3);
  const auto l = f.gpu.launches();
  REQUIRE(l.size() == 1);
  CHECK(l[0].u64_arg(3) == kOut.address + 2ull * q);
  CHECK(l[0].u32_arg(4) == 5);
  CHECK(l[0].u32_arg(5) == kv);
  CHECK(l[0].u32_arg(7) == k);
  CHECK(l[0].u32_arg(8) == per_seq);
  CHECK(error_of([&] {
          qkv_projection_m16_tc(TargetLevers{true, false}, f.gpu, ks, kIn, k, kW, kS, kOut,
                                per_seq, QkvSlot{q, kv}, 5, k, 3);
        }) == "qkv_projection_m16_tc: the target's attn_m16_tc lever is off");
  CHECK_THROWS_AS(qkv_projection_m16_tc(on, f.gpu, ks, kIn, k, kW, kS, kOut, per_seq,
                                        QkvSlot{q + 2 * kv, 1}, 5, k, 3),
                  Error);
  // A null qkv is refused though the slot's first column would not be null.
  CHECK(error_of([&] {
          qkv_projection_m16_tc(on, f.gpu, ks, kIn, k, kW, kS, DevicePtr{0}, per_seq,
                                QkvSlot{q, kv}, 5, k, 3);
        }) == "qkv_projection_m16_tc: qkv is a null device pointer");
  CHECK(error_of([&] {
          qkv_projection_m16_tc(on, f.gpu, ks, kIn, k, kW, kS, DevicePtr{0 - std::uint64_t{16}},
                                per_seq, QkvSlot{q, kv}, 5, k, 3);
        }).find("past the end of the address space") != std::string::npos);
  CHECK(f.gpu.launches().size() == 1);
}

TEST_CASE("target levers: on from sm_80, off before") {
  CHECK(target_levers("sm_90").ffn_m16_tc);
  CHECK(target_levers("sm_80").attn_m16_tc);
  CHECK_FALSE(target_levers("sm_75").ffn_m16_tc);
  CHECK_THROWS_AS(target_levers("hopper"), Error);
}
