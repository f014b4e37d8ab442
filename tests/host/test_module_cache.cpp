// The module cache compiles each key once, even when many threads ask at once, counts
// hits, checks the kernels' tile constants, and names the entries of a module when asked
// for one it lacks.
#include <doctest/doctest.h>

#include <string>
#include <thread>
#include <vector>

#include "metrale/error.hpp"
#include "metrale/kernel_variants.hpp"
#include "metrale/module_cache.hpp"
#include "support/fake_backend.hpp"

using namespace metrale;

TEST_CASE("16 threads asking for one module at once compile it once") {
  test::RecordingBackend gpu;
  test::CountingCompiler compiler;
  compiler.delay = std::chrono::milliseconds(200);
  ModuleCache cache(gpu, compiler.fn());
  std::vector<std::thread> threads;
  std::vector<KernelHandle> handles(16);
  for (int i = 0; i < 16; ++i) {
    threads.emplace_back([&, i] { handles[i] = cache.kernel("w8a16_gemm_m16"); });
  }
  for (auto& t : threads) t.join();
  CHECK(compiler.calls.load() == 1);
  CHECK(cache.stats().compiles == 1);
  CHECK(cache.stats().hits == 15);
  for (const KernelHandle& h : handles) CHECK(h.function == handles[0].function);
  // A second entry of a module is a hit, no compile.
  cache.kernel("w8a16_gemv_batch16");
  CHECK(compiler.calls.load() == 2);
  cache.kernel("w8a16_gemv_batch16_strided");
  CHECK(compiler.calls.load() == 2);
  // The same source with other defines is another key.
  cache.kernel("w8a16_gemm_m16_strided");
  CHECK(compiler.calls.load() == 3);
}

TEST_CASE("a module's unknown entry names the module and the entries it has") {
  test::RecordingBackend gpu;
  test::CountingCompiler compiler;
  ModuleCache cache(gpu, compiler.fn());
  try {
    cache.kernel(variant_named("w8a16_gemv_batch16"), "w8a16_gemm_m16_n64");
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) ==
          "module w8a16_gemv_batch16 has no entry w8a16_gemm_m16_n64 (its entries: "
          "w8a16_gemv_batch16, w8a16_gemv_batch16_strided)");
  }
  CHECK_THROWS_WITH_AS(cache.kernel("no_such_kernel"),
                       doctest::Contains("no kernel entry named no_such_kernel"), Error);
}

TEST_CASE("a tile constant that differs from the host's is refused on load") {
  test::RecordingBackend gpu;
  gpu.tile_constant_skew = 16;
  test::CountingCompiler compiler;
  ModuleCache cache(gpu, compiler.fn());
  CHECK_THROWS_WITH_AS(cache.kernel("w8a16_gemm_m16"),
                       "module w8a16_gemm_m16: kernel constant M16_N_TILE = 48 but the host "
                       "expects 32",
                       Error);
  CHECK_THROWS_WITH_AS(cache.kernel("w8a16_gemm_m16_n64"),
                       doctest::Contains("M16_N_TILE_WIDE = 80 but the host expects 64"), Error);
}

TEST_CASE("a failed compile reaches every waiter and a later call retries") {
  test::RecordingBackend gpu;
  test::CountingCompiler compiler;
  compiler.fail = true;
  compiler.delay = std::chrono::milliseconds(100);
  ModuleCache cache(gpu, compiler.fn());
  std::vector<std::thread> threads;
  std::atomic<int> errors{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      try {
        cache.kernel("w8a16_gemv_batch16");
      } catch (const Error&) {
        errors.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(errors.load() == 4);
  compiler.fail = false;
  CHECK(cache.kernel("w8a16_gemv_batch16").function != nullptr);
}

TEST_CASE("warm_up loads every variant in parallel, then lookups are hits") {
  test::RecordingBackend gpu;
  test::CountingCompiler compiler;
  ModuleCache cache(gpu, compiler.fn());
  cache.warm_up();
  CHECK(compiler.calls.load() == static_cast<int>(kernel_variants().size()));
  for (const KernelVariant& v : kernel_variants()) {
    for (const std::string& e : v.entries) cache.kernel(v, e);
  }
  CHECK(compiler.calls.load() == static_cast<int>(kernel_variants().size()));
  CHECK_THROWS_AS(cache.warm_up(std::vector<std::string>{"nope"}), Error);
}
