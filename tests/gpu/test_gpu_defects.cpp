// The budget catches real defects: the tensor-core kernel built with one planted defect
// (a compile switch of this test build only) must fail it on fresh random data.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include "gpu/gpu_fixture.hpp"
#include "metrale/embedded_sources.hpp"
#include "metrale/kernel_variants.hpp"
#include "metrale/nvrtc_compiler.hpp"
#include "metrale/w8a16_gemm_m16.hpp"
#include "metrale/w8a16_gemm_m16_stream.hpp"
#include "metrale/w8a16_gemm_m16_streamk.hpp"

using namespace metrale;
using namespace metrale::test;

TEST_CASE("gpu: each planted defect fails the budget") {
  const char* const defects[] = {"METRALE_DEFECT_DROP_KBLOCK", "METRALE_DEFECT_BF16_ACCUM",
                                 "METRALE_DEFECT_WRONG_SCALE_ROW",
                                 "METRALE_DEFECT_SKIP_LAST_TILE", "METRALE_DEFECT_SHIFT_ROW"};
  std::uint32_t seed = 7000;
  for (const char* entry : {"w8a16_gemm_m16", "w8a16_gemm_m16_stream", "w8a16_gemm_m16_streamk"}) {
    const KernelVariant& v = variant_for_entry(entry);
    for (const char* defect : defects) {
      CAPTURE(entry);
      CAPTURE(defect);
      // Both builds (m <= 8 and m in 9..16) carry the defect.
      std::vector<std::unique_ptr<LoadedModule>> modules;
      for (const KernelVariant& b : module_builds(v)) {
        std::vector<Define> defines = b.defines;
        defines.push_back({defect, "1"});
        const CompiledModule compiled = nvrtc_compile(CompileRequest{
            b.source, embedded_source(b.source), defines, {}, gpu().backend.target()});
        modules.push_back(gpu().backend.load_module(compiled.image, defect));
      }
      REQUIRE(modules.size() == 2);
      const std::string_view symbol = kernel_symbol_of(v, entry);
      KernelHandle h{modules[0]->function(symbol), gpu().backend.context(), entry};
      h.function_above8 = modules[1]->function(symbol);
      for (std::uint32_t m : {1u, 8u, 16u}) {
        CAPTURE(m);
        Problem p(m, 4096 + 32, 7168, 7168, 4096 + 32, ++seed);
        if (std::string_view(entry) == "w8a16_gemm_m16") {
          w8a16_gemm_m16(gpu().backend, h, p.input.get(), p.weight.get(), p.scale.get(),
                         p.out.get(), m, p.n, p.k, 0);
        } else if (std::string_view(entry) == "w8a16_gemm_m16_stream") {
          w8a16_gemm_m16_stream(gpu().backend, h, p.input.get(), p.weight.get(), p.scale.get(),
                                p.out.get(), m, p.n, p.k, p.k, p.n, 1, 0);
        } else {
          w8a16_gemm_m16_streamk(gpu().backend, h, p.input.get(), p.weight.get(),
                                 p.scale.get(), p.out.get(), m, p.n, p.k, p.k, p.n,
                                 gpu().streamk_workspace(), 2 * gpu().sm_count(), 0);
        }
        p.run_reference();
        gpu().backend.synchronize();
        const OutputCheck c = check_output(p, p.download_out(), p.download_ref());
        MESSAGE(fmt::format(
            "{} {} m={}: {} of {} outputs outside budget, max ULP {}, max |err| {:.3g}", entry,
            defect, m, c.budget.failures, c.budget.checked, c.budget.max_ulp, c.budget.max_abs));
        CHECK(c.budget.failures > 0);
      }
    }
  }
}
