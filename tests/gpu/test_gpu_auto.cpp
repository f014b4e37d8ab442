// w8a16_gemm_m16_auto on a device: on shapes where the plan names each kind of entry (the
// seed's tiles, the skinny entry, the deep skinny entry on one chunk and in chunks, its
// 32-row form, stream-K), with and without PDL, on contiguous and strided rows, the output
// is within the budget of the reference, nothing is written outside [m, n], and a second
// run on the same operands gives the same bits.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "gpu/gpu_fixture.hpp"
#include "metrale/w8a16_gemm_m16_auto.hpp"

using namespace metrale;
using namespace metrale::test;

TEST_CASE("gpu: w8a16_gemm_m16_auto runs every kind of plan within budget, bit-identically") {
  GpuContext& g = gpu();
  const KernelLookup kernels = kernel_lookup(g.cache);
  std::set<std::string, std::less<>> entries;
  std::uint32_t seed = 7100;
  for (const auto& mnk : {std::array<std::uint32_t, 3>{1, 64, 512}, {3, 576, 7168},
                          {8, 1536, 7168}, {1, 4096, 4096}, {16, 4096, 4096},
                          {12, 1344, 8192}, {4, 2304, 16384}, {16, 7168, 18432},
                          {1, 28672, 4096}, {16, 28672, 4096}, {9, 24576, 1536}}) {
    const auto m = std::get<0>(mnk);
    const auto n = std::get<1>(mnk);
    const auto k = std::get<2>(mnk);
    for (const bool pdl : {false, true}) {
      for (const bool strided : {false, true}) {
        const std::uint32_t a = strided ? k + 64 : k, c = strided ? n + 8 : n;
        const M16Plan plan = plan_m16_gemm(m, n, k, g.plan_device(), M16LaunchOptions{pdl});
        const std::uint64_t need =
            w8a16_gemm_m16_auto_workspace_bytes(m, n, k, g.plan_device(), pdl);
        REQUIRE(need <= g.streamk_buffer.size());
        const std::string what = fmt::format("auto {} x {} m={} pdl={} strided={}: {}", n, k, m,
                                             pdl, strided, plan.entry);
        CAPTURE(what);
        Problem p(m, n, k, a, c, ++seed);
        const auto run = [&] {
          w8a16_gemm_m16_auto(g.backend, kernels, g.plan_device(), p.input.get(), p.weight.get(),
                              p.scale.get(), p.out.get(), m, n, k, a, c, g.streamk_workspace(),
                              0, pdl);
          g.backend.synchronize();
        };
        run();
        const std::vector<std::uint16_t> first = p.download_out();
        p.poison();
        run();
        p.run_reference();
        g.backend.synchronize();
        CHECK(p.download_out() == first);
        const OutputCheck r = check_output(p, first, p.download_ref());
        CHECK(r.budget.checked == std::uint64_t{m} * n);
        CHECK(r.budget.failures == 0);
        CHECK(r.written_outside == 0);
        if (r.budget.failures != 0 || r.written_outside != 0) {
          MESSAGE(fmt::format("{}: {} outside budget, {} written outside [m, n]", what,
                              r.budget.failures, r.written_outside));
        }
        entries.emplace(plan.entry);
      }
    }
  }
  std::string seen;
  for (const std::string& e : entries) seen += " " + e;
  MESSAGE("auto ran:" << seen);
  for (const char* e : {"w8a16_gemm_m16", "w8a16_gemm_m16_splitk", "w8a16_gemm_m16_streamk",
                        "w8a16_gemm_m16_skinny", "w8a16_gemm_m16_skinny_deep",
                        "w8a16_gemm_m16_skinny_deep3", "w8a16_gemm_m16_skinny_deep32"}) {
    CAPTURE(e);
    CHECK(entries.contains(e));
  }
}
