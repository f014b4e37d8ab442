// w8a16_gemm_m16_auto and w8a16_gemm_m16_planned: their own checks, made before anything is
// planned, compiled or launched, and the seed's contiguous entries on strided rows.
// (tests/host/test_plan_grid.cpp holds both to the launchers over a grid of plans.)
#include <doctest/doctest.h>

#include <string>

#include "metrale/error.hpp"
#include "metrale/w8a16_gemm_m16_auto.hpp"
#include "support/launcher_fixture.hpp"

using namespace metrale;

namespace {

using test::kIn, test::kW, test::kS, test::kOut, test::kWs;

using Fixture = test::LauncherFixture;
using test::error_of;

}  // namespace

TEST_CASE("w8a16_gemm_m16_auto: bad arguments are refused before anything is compiled") {
  Fixture f;
  const auto call = [&](std::uint32_t m, std::uint32_t n, std::uint32_t k, std::uint32_t a,
                        std::uint32_t c, DevicePtr out, StreamKWorkspace ws) {
    return error_of([&] {
      w8a16_gemm_m16_auto(f.gpu, f.kernels, 132, kIn, kW, kS, out, m, n, k, a, c, ws, 0);
    });
  };
  CHECK(call(0, 4096, 4096, 4096, 4096, kOut, {}) ==
        "w8a16_gemm_m16_auto: m=0 outside 1..=16 (kernel M tile)");
  CHECK(call(17, 4096, 4096, 4096, 4096, kOut, {}) ==
        "w8a16_gemm_m16_auto: m=17 outside 1..=16 (kernel M tile)");
  CHECK(call(1, 4096, 4000, 4000, 4096, kOut, {}) ==
        "w8a16_gemm_m16_auto: K=4000 not a multiple of 128 (block-scale granularity)");
  CHECK(call(1, 4096, 4096, 4092, 4096, kOut, {}).starts_with(
      "w8a16_gemm_m16_auto: row pitches (a=4092, c=4096) must cover"));
  CHECK(call(1, 0, 4096, 4096, 0, kOut, {}) ==
        "w8a16_gemm_m16_auto: n=0: nothing to compute (N must be at least 1)");
  CHECK(call(1, 4096, 4096, 4096, 4096, DevicePtr(), {}) ==
        "w8a16_gemm_m16_auto: output is a null device pointer");
  // Llama-3-8B gate_up at one token: stream-K on one CTA per SM, which needs a workspace.
  const std::uint64_t need = w8a16_gemm_m16_auto_workspace_bytes(1, 28672, 4096, 132);
  CHECK(need == w8a16_gemm_m16_streamk_workspace_bytes(28672, 132));
  CHECK(call(1, 28672, 4096, 4096, 28672, kOut, {}) ==
        fmt::format("w8a16_gemm_m16_planned: the plan (w8a16_gemm_m16_streamk) needs a "
                    "workspace of {} bytes (m16_plan_grid), and the caller's is 0 bytes at 0x0",
                    need));
  CHECK(call(1, 28672, 4096, 4096, 28672, kOut, {kWs, need - 16}).starts_with(
      "w8a16_gemm_m16_planned: the plan (w8a16_gemm_m16_streamk) needs a workspace"));
  CHECK(call(1, 28672, 4096, 4096, 28672, kOut, {DevicePtr(kWs.address + 8), need}) ==
        "w8a16_gemm_m16_planned: the plan (w8a16_gemm_m16_streamk) needs a workspace, and the "
        "caller's at 0x50000000008 is not 16-byte aligned");
  // K = 0 is a multiple of 128, but no entry past the seed's has a CTA for it.
  CHECK(call(1, 4096, 0, 0, 4096, kOut, {}) ==
        "w8a16_gemm_m16_auto: K=0 leaves no 128-K block (this entry needs K >= 128)");
  CHECK(error_of([] { (void)w8a16_gemm_m16_auto_workspace_bytes(1, 4096, 0, 132, true); }) ==
        "w8a16_gemm_m16_auto_workspace_bytes: K=0 leaves no 128-K block (this entry needs K "
        ">= 128)");
  CHECK(error_of([] { (void)w8a16_gemm_m16_auto_workspace_bytes(1, 4096, 100, 132); }) ==
        "w8a16_gemm_m16_auto_workspace_bytes: K=100 not a multiple of 128 (block-scale "
        "granularity)");
  CHECK(f.gpu.launches().empty());
  CHECK(f.compiler.calls == 0);
  // A layer whose plan needs none runs without one (Llama-3-8B o: the deep entry).
  CHECK(w8a16_gemm_m16_auto_workspace_bytes(1, 4096, 4096, 132) == 0);
  CHECK(call(1, 4096, 4096, 4096, 4096, kOut, {}) == "<no error>");
  CHECK(f.gpu.launches().size() == 1);
}

TEST_CASE("w8a16_gemm_m16_planned: the seed's contiguous entries on strided rows") {
  Fixture f;
  const KernelHandle strided = f.cache.kernel("w8a16_gemm_m16_strided");
  const KernelHandle n64 = f.cache.kernel("w8a16_gemm_m16_n64");
  for (const char* entry : {"w8a16_gemm_m16", "w8a16_gemm_m16_n64"}) {
    CAPTURE(entry);
    const M16Plan plan{entry, 1};
    w8a16_gemm_m16_planned(f.gpu, f.kernels, plan, kIn, kW, kS, kOut, 4, 4096, 1024, 1024, 4096,
                           {}, 0);  // contiguous: the entry planned
    w8a16_gemm_m16_planned(f.gpu, f.kernels, plan, kIn, kW, kS, kOut, 4, 4096, 1024, 3072, 5120,
                           {}, 0);  // strided: the strided entry
  }
  const auto l = f.gpu.launches();
  REQUIRE(l.size() == 4);
  CHECK(l[0].config.grid.x == 128);
  CHECK(l[0].function == strided.function);  // the contiguous entry runs the strided kernel
  CHECK(l[1].config.grid.x == 128);
  CHECK(l[1].function == strided.function);
  CHECK(l[1].u32_arg(7) == 3072);
  CHECK(l[1].u32_arg(8) == 5120);
  CHECK(l[2].config.grid.x == 64);
  CHECK(l[2].function == n64.function);
  CHECK(l[3].config.grid.x == 128);  // 32-wide tiles
  CHECK(l[3].function == strided.function);
  CHECK(error_of([&] {
          w8a16_gemm_m16_planned(f.gpu, f.kernels, M16Plan{"w8a16_gemm_m16_nope", 1}, kIn, kW, kS,
                                 kOut, 4, 4096, 1024, 1024, 4096, {}, 0);
        }) == "m16_plan_grid: the plan names 'w8a16_gemm_m16_nope', which no launcher runs");
  CHECK(f.gpu.launches().size() == 4);
}

TEST_CASE("w8a16_gemm_m16_auto: the plan is made for the device it is given") {
  // Llama-3-8B gate_up at one token without PDL: on an H100's DRAM bandwidth the deep entry's
  // one chunk (1792 CTAs of 8 warps, no workspace), on 132 SMs of unknown bandwidth stream-K
  // on one CTA per SM (docs/performance.md, item 188).
  Fixture f;
  const KernelHandle deep = f.cache.kernel("w8a16_gemm_m16_skinny_deep");
  const KernelHandle streamk = f.cache.kernel("w8a16_gemm_m16_streamk");
  constexpr std::uint32_t m = 1, n = 28672, k = 4096;
  w8a16_gemm_m16_auto(f.gpu, f.kernels, M16PlanDevice{132, 3352}, kIn, kW, kS, kOut, m, n, k, k,
                      n, {}, 0);
  const std::uint64_t ws_bytes = w8a16_gemm_m16_auto_workspace_bytes(m, n, k, 132);
  CHECK(ws_bytes > 0);
  w8a16_gemm_m16_auto(f.gpu, f.kernels, 132, kIn, kW, kS, kOut, m, n, k, k, n,
                      {kWs, ws_bytes}, 0);
  const auto l = f.gpu.launches();
  REQUIRE(l.size() == 2);
  CHECK(l[0].function == deep.function);
  CHECK(l[0].config.grid.x * l[0].config.grid.y == 1792);
  CHECK(l[0].config.block.x == 8 * 32);
  CHECK(l[1].function == streamk.function);
  CHECK(l[1].config.grid.x == 132);
  // Without a workspace the device's plan runs (it needs none); stream-K's is refused.
  CHECK(w8a16_gemm_m16_auto_workspace_bytes(m, n, k, M16PlanDevice{132, 3352}) == 0);
  CHECK(error_of([&] {
          w8a16_gemm_m16_auto(f.gpu, f.kernels, 132, kIn, kW, kS, kOut, m, n, k, k, n, {}, 0);
        }).find("workspace") != std::string::npos);
  CHECK(f.gpu.launches().size() == 2);
}

TEST_CASE("w8a16_gemm_m16_auto: above 8 tokens the plan is made for the device too") {
  // Without PDL on an H100's DRAM bandwidth (docs/performance.md, item 189): Llama-3-8B down
  // at 12 tokens on the deep entry's 16-row form (256 CTAs of 8 warps), Llama-3-8B gate_up
  // at 16 on stream-K's one CTA per SM; on 132 SMs of unknown bandwidth the 32-row form
  // (128 CTAs of 16 warps) and stream-K on two CTAs per SM.
  Fixture f;
  const KernelHandle deep = f.cache.kernel("w8a16_gemm_m16_skinny_deep");
  const KernelHandle deep32 = f.cache.kernel("w8a16_gemm_m16_skinny_deep32");
  const KernelHandle streamk = f.cache.kernel("w8a16_gemm_m16_streamk");
  const M16PlanDevice h100{132, 3352};
  for (const M16PlanDevice device : {h100, M16PlanDevice{132}}) {
    w8a16_gemm_m16_auto(f.gpu, f.kernels, device, kIn, kW, kS, kOut, 12, 4096, 14336, 14336,
                        4096, {}, 0);
    const std::uint64_t ws_bytes = w8a16_gemm_m16_auto_workspace_bytes(16, 28672, 4096, device);
    CHECK(ws_bytes > 0);
    w8a16_gemm_m16_auto(f.gpu, f.kernels, device, kIn, kW, kS, kOut, 16, 28672, 4096, 4096,
                        28672, {kWs, ws_bytes}, 0);
  }
  // The 16-token builds: function_above8 of the token-split entries; the 32-row form has
  // one build, which serves every m.
  const auto l = f.gpu.launches();
  REQUIRE(l.size() == 4);
  CHECK(l[0].function == deep.function_above8);
  CHECK(l[0].config.grid.x * l[0].config.grid.y == 256);
  CHECK(l[0].config.block.x == 8 * 32);
  CHECK(l[1].function == streamk.function_above8);
  CHECK(l[1].config.grid.x == 132);
  CHECK(l[2].function == deep32.function);
  CHECK(l[2].config.grid.x * l[2].config.grid.y == 128);
  CHECK(l[2].config.block.x == 16 * 32);
  CHECK(l[3].function == streamk.function_above8);
  CHECK(l[3].config.grid.x == 264);
}
