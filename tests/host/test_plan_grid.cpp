// m16_plan_grid and w8a16_gemm_m16_planned against the launchers: every plan plan_m16_gemm
// makes over a grid of shapes, token counts and SM counts is launched through its launcher on
// the recording backend, as a caller would launch it by hand; the grid it launches and the
// least workspace it takes are what m16_plan_grid says, and w8a16_gemm_m16_planned (and
// w8a16_gemm_m16_auto) launch the same kernel with the same configuration and arguments.
#include <doctest/doctest.h>

#include <cstdint>
#include <set>
#include <string>
#include <tuple>

#include "metrale/error.hpp"
#include "metrale/m16_plan.hpp"
#include "metrale/m16_plan_grid.hpp"
#include "metrale/w8a16_gemm_m16.hpp"
#include "metrale/w8a16_gemm_m16_auto.hpp"
#include "metrale/w8a16_gemm_m16_skinny.hpp"
#include "metrale/w8a16_gemm_m16_splitk.hpp"
#include "metrale/w8a16_gemm_m16_stream.hpp"
#include "metrale/w8a16_gemm_m16_streamk.hpp"
#include "support/fake_backend.hpp"
#include "support/launcher_fixture.hpp"

using namespace metrale;

namespace {

using test::kIn, test::kW, test::kS, test::kOut, test::kWs;

struct Problem {
  std::uint32_t m, n, k;
  bool pdl;
};

// Launches `plan` as a caller of the launchers would by hand, with `workspace`.
void launch_plan(const GpuBackend& gpu, ModuleCache& cache, const M16Plan& plan,
                 const Problem& p, StreamKWorkspace workspace) {
  const M16LaunchOptions options{p.pdl, plan.chunk_cluster, plan.max_ctas_per_sm};
  const KernelHandle kernel = cache.kernel(plan.entry);
  const auto [m, n, k] = std::tuple{p.m, p.n, p.k};
  if (plan.entry == "w8a16_gemm_m16") {
    w8a16_gemm_m16(gpu, kernel, kIn, kW, kS, kOut, m, n, k, 0);
  } else if (plan.entry == "w8a16_gemm_m16_n64") {
    w8a16_gemm_m16_n64(gpu, kernel, kIn, kW, kS, kOut, m, n, k, 0);
  } else if (plan.entry == "w8a16_gemm_m16_splitk") {
    w8a16_gemm_m16_splitk(gpu, kernel, kIn, kW, kS, kOut, m, n, k, k, n, plan.split, 0, options);
  } else if (plan.entry == "w8a16_gemm_m16_stream") {
    w8a16_gemm_m16_stream(gpu, kernel, kIn, kW, kS, kOut, m, n, k, k, n, plan.split, 0, options);
  } else if (plan.entry == "w8a16_gemm_m16_streamk") {
    w8a16_gemm_m16_streamk(gpu, kernel, kIn, kW, kS, kOut, m, n, k, k, n, workspace, plan.ctas,
                           0, options, plan.stages);
  } else if (plan.entry == "w8a16_gemm_m16_skinny") {
    w8a16_gemm_m16_skinny(gpu, kernel, kIn, kW, kS, kOut, m, n, k, k, n, workspace, plan.warps,
                          0, options);
  } else {
    REQUIRE(plan.entry.starts_with("w8a16_gemm_m16_skinny_deep"));
    w8a16_gemm_m16_skinny_deep(gpu, kernel, kIn, kW, kS, kOut, m, n, k, k, n, workspace,
                               plan.warps, plan.warp_blocks, 0, options);
  }
}

// Whether two recorded launches are the same launch.
bool same_launch(const test::RecordedLaunch& a, const test::RecordedLaunch& b) {
  const auto dims = [](const Dim3& d) { return std::tuple{d.x, d.y, d.z}; };
  return a.function == b.function && dims(a.config.grid) == dims(b.config.grid) &&
         dims(a.config.block) == dims(b.config.block) &&
         dims(a.config.cluster) == dims(b.config.cluster) &&
         a.config.shared_bytes == b.config.shared_bytes &&
         a.config.programmatic_dependent == b.config.programmatic_dependent && a.args == b.args;
}

}  // namespace

TEST_CASE("m16_plan_grid and w8a16_gemm_m16_planned / _auto against hand launches of each plan") {
  test::RecordingBackend handles_gpu;
  test::CountingCompiler compiler;
  ModuleCache cache{handles_gpu, compiler.fn()};
  const KernelLookup lookup = kernel_lookup(cache);
  std::set<std::string, std::less<>> entries;
  int plans = 0;
  for (const std::uint32_t sms : {132u, 114u, 66u, 16u}) {
    for (const std::uint32_t n : {64u, 576u, 1088u, 1344u, 1536u, 2048u, 4096u, 5120u, 6144u,
                                  7168u, 10240u, 16896u, 24576u, 28672u, 36864u, 51200u}) {
      for (const std::uint32_t k : {512u, 640u, 896u, 1024u, 1536u, 4096u, 5120u, 7168u, 8192u,
                                    10240u, 14336u, 18432u, 25600u}) {
        for (const std::uint32_t m : {1u, 2u, 4u, 8u, 9u, 13u, 16u}) {
          for (const bool pdl : {false, true}) {
            const Problem p{m, n, k, pdl};
            const M16Plan plan = plan_m16_gemm(m, n, k, sms, M16LaunchOptions{pdl});
            const M16PlanGrid grid = m16_plan_grid(plan, n, k);
            test::RecordingBackend gpu;
            launch_plan(gpu, cache, plan, p, {kWs, grid.workspace_bytes});
            const auto launches = gpu.launches();
            REQUIRE(launches.size() == 1);
            const Dim3 g = launches[0].config.grid;
            if (std::uint64_t{g.x} * g.y * g.z != grid.ctas || grid.ctas == 0) {
              FAIL_CHECK(plan.entry << " on " << n << " x " << k << ", m = " << m << ", "
                                    << sms << " SMs, PDL " << pdl << ": " << g.x << " x "
                                    << g.y << " x " << g.z << " CTAs launched, "
                                    << grid.ctas << " planned");
            }
            // The library's launch of the plan, and its automatic call, are the same launch.
            test::RecordingBackend planned_gpu;
            w8a16_gemm_m16_planned(planned_gpu, lookup, plan, kIn, kW, kS, kOut, m, n, k, k, n,
                                   {kWs, grid.workspace_bytes}, 0, pdl);
            w8a16_gemm_m16_auto(planned_gpu, lookup, sms, kIn, kW, kS, kOut, m, n, k, k, n,
                                {kWs, grid.workspace_bytes}, 0, pdl);
            const auto planned = planned_gpu.launches();
            REQUIRE(planned.size() == 2);
            if (!same_launch(planned[0], launches[0]) || !same_launch(planned[1], launches[0])) {
              FAIL_CHECK(plan.entry << " on " << n << " x " << k << ", m = " << m << ", "
                                    << sms << " SMs, PDL " << pdl
                                    << ": w8a16_gemm_m16_planned or _auto launched otherwise");
            }
            CHECK(w8a16_gemm_m16_auto_workspace_bytes(m, n, k, sms, pdl) == grid.workspace_bytes);
            // One byte less than the plan's workspace is refused, and nothing launched.
            if (grid.workspace_bytes > 0) {
              test::RecordingBackend short_gpu;
              CHECK_THROWS_AS(launch_plan(short_gpu, cache, plan, p,
                                          {kWs, grid.workspace_bytes - 1}),
                              Error);
              CHECK(short_gpu.launches().empty());
            }
            entries.emplace(plan.entry);
            ++plans;
          }
        }
      }
    }
  }
  MESSAGE(plans << " plans launched");
  // Every entry the plan names is among them.
  for (const char* e : {"w8a16_gemm_m16", "w8a16_gemm_m16_n64", "w8a16_gemm_m16_splitk",
                        "w8a16_gemm_m16_stream", "w8a16_gemm_m16_streamk",
                        "w8a16_gemm_m16_skinny", "w8a16_gemm_m16_skinny_deep",
                        "w8a16_gemm_m16_skinny_deep3", "w8a16_gemm_m16_skinny_deep32"}) {
    CAPTURE(e);
    CHECK(entries.contains(e));
  }
}
