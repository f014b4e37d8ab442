// The module cache compiles each key once, even when many threads ask at once, counts
// hits, checks the kernels' tile constants, and names the entries of a module when asked
// for one it lacks.
#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "metrale/error.hpp"
#include "metrale/kernel_variants.hpp"
#include "metrale/module_cache.hpp"
#include "support/fake_backend.hpp"

using namespace metrale;

TEST_CASE("16 threads asking for one entry at once compile its modules once") {
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
  // A token-split entry: its module for m <= 8 and its module for m in 9..16.
  CHECK(compiler.calls.load() == 2);
  CHECK(cache.stats().compiles == 2);
  CHECK(cache.stats().hits == 30);
  for (const KernelHandle& h : handles) {
    CHECK(h.function == handles[0].function);
    CHECK(h.function_above8 == handles[0].function_above8);
  }
  // Asked again, the entry's handle is the same and counts a hit per module, as before.
  const KernelHandle again = cache.kernel("w8a16_gemm_m16");
  CHECK(again.function == handles[0].function);
  CHECK(again.function_above8 == handles[0].function_above8);
  CHECK(std::string_view(again.name) == "w8a16_gemm_m16");
  CHECK(cache.stats().hits == 32);
  // A second entry of a module is a hit, no compile.
  cache.kernel("fill_random_bf16");
  CHECK(compiler.calls.load() == 3);
  cache.kernel("fill_random_fp8");
  CHECK(compiler.calls.load() == 3);
  // Entries that share a kernel: one compile.
  cache.kernel("w8a16_gemv_batch16");
  CHECK(compiler.calls.load() == 4);
  cache.kernel("w8a16_gemv_batch16_strided");
  CHECK(compiler.calls.load() == 4);
  // The same source with other defines is another key (a token-split pair of modules).
  cache.kernel("w8a16_gemm_m16_n64");
  CHECK(compiler.calls.load() == 6);
}

TEST_CASE("a module's unknown entry names the module and the entries it has") {
  test::RecordingBackend gpu;
  test::CountingCompiler compiler;
  ModuleCache cache(gpu, compiler.fn());
  try {
    cache.kernel(variant_named("fill_random"), "w8a16_gemm_m16_n64");
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) ==
          "module fill_random has no entry w8a16_gemm_m16_n64 (its entries: "
          "fill_random_bf16, fill_random_fp8, fill_random_f32, fill_u16)");
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
                       "module w8a16_gemm_m16.m8: kernel constant M16_N_TILE = 48 but the host "
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
  const int modules = static_cast<int>(all_module_builds().size());
  CHECK(modules > static_cast<int>(kernel_variants().size()));  // token-split variants count twice
  CHECK(compiler.calls.load() == modules);
  for (const KernelVariant& v : kernel_variants()) {
    for (const std::string& e : v.entries) {
      const KernelHandle h = cache.kernel(v, e);
      CHECK(h.function != nullptr);
      CHECK((h.function_above8 != nullptr) == v.token_split);
      CHECK(h.function_above8 != h.function);
    }
  }
  CHECK(compiler.calls.load() == modules);
  CHECK_THROWS_AS(cache.warm_up(std::vector<std::string>{"nope"}), Error);
}

TEST_CASE("lookups by entry name from many threads at once give the entry's handle") {
  test::RecordingBackend gpu;
  test::CountingCompiler compiler;
  ModuleCache cache(gpu, compiler.fn());
  std::vector<std::string> names;
  for (const KernelVariant& v : kernel_variants()) {
    names.insert(names.end(), v.entries.begin(), v.entries.end());
  }
  // Each thread resolves every entry, in its own order, many times: first lookups race with
  // repeated ones of the same entry.
  std::vector<std::vector<KernelHandle>> seen(8);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < seen.size(); ++i) {
    threads.emplace_back([&, i] {
      seen[i].resize(names.size());
      for (int round = 0; round < 200; ++round) {
        for (std::size_t j = 0; j < names.size(); ++j) {
          const std::size_t e = (j + i * 3 + round) % names.size();
          seen[i][e] = cache.kernel(names[e]);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(compiler.calls.load() == static_cast<int>(all_module_builds().size()));
  for (std::size_t e = 0; e < names.size(); ++e) {
    CAPTURE(names[e]);
    const KernelHandle expected = cache.kernel(variant_for_entry(names[e]), names[e]);
    for (const auto& handles : seen) {
      CHECK(handles[e].function == expected.function);
      CHECK(handles[e].function_above8 == expected.function_above8);
      CHECK(std::string_view(handles[e].name) == std::string_view(expected.name));
    }
  }
}

TEST_CASE("entries that share a kernel: one compile, one function, warm-up by entry name") {
  const KernelVariant& strided = variant_named("w8a16_gemm_m16_strided");
  CHECK(&variant_named("w8a16_gemm_m16") == &strided);
  CHECK(&variant_named("w8a16_gemm_m16_splitk") == &strided);
  CHECK(&variant_for_entry("w8a16_gemm_m16_splitk") == &strided);
  CHECK(kernel_symbol_of(strided, "w8a16_gemm_m16_splitk") == "w8a16_gemm_m16_strided");
  CHECK(kernel_symbol_of(strided, "w8a16_gemm_m16") == "w8a16_gemm_m16_strided");
  CHECK(kernel_symbol_of(variant_named("w8a16_gemv_batch16"), "w8a16_gemv_batch16") ==
        "w8a16_gemv_batch16_strided");
  CHECK(kernel_symbol_of(variant_named("fill_random"), "fill_u16") == "fill_u16");
  // The deep entry's two forms share a module: the C function looks up the 80-register
  // form after the first, which then compiles nothing.
  CHECK(&variant_for_entry("w8a16_gemm_m16_skinny_deep") ==
        &variant_for_entry("w8a16_gemm_m16_skinny_deep3"));
  CHECK(&variant_for_entry("w8a16_gemm_m16_skinny") !=
        &variant_for_entry("w8a16_gemm_m16_skinny_deep"));
  // Named twice, by variant and by entry: its two modules once.
  const std::vector<std::string> names = {"w8a16_gemm_m16_strided", "w8a16_gemm_m16_splitk"};
  const std::vector<KernelVariant> builds = module_builds_named(names);
  REQUIRE(builds.size() == 2);
  CHECK(builds[0].name == "w8a16_gemm_m16.m8");
  CHECK(builds[1].name == "w8a16_gemm_m16.m16");

  test::RecordingBackend gpu;
  test::CountingCompiler compiler;
  ModuleCache cache(gpu, compiler.fn());
  cache.warm_up(std::vector<std::string>{"w8a16_gemm_m16_splitk"});
  CHECK(compiler.calls.load() == 2);
  const KernelHandle split = cache.kernel("w8a16_gemm_m16_splitk");
  const KernelHandle rows = cache.kernel("w8a16_gemm_m16_strided");
  const KernelHandle contiguous = cache.kernel("w8a16_gemm_m16");
  CHECK(compiler.calls.load() == 2);
  CHECK(contiguous.function == rows.function);
  CHECK(split.function == rows.function);
  CHECK(split.function_above8 == rows.function_above8);
  CHECK(std::string(split.name) == "w8a16_gemm_m16_splitk");
  CHECK(std::string(rows.name) == "w8a16_gemm_m16_strided");
}

TEST_CASE("variants of one source and defines with other entries, symbol or checks load apart") {
  test::RecordingBackend gpu;
  test::CountingCompiler compiler;
  ModuleCache cache(gpu, compiler.fn());
  // A variant with one of the shipped variant's entries, then the shipped one: the second
  // has all of its entries, not the first one's module.
  KernelVariant one_entry = variant_named("fill_random");
  one_entry.entries = {"fill_u16"};
  const KernelHandle u16 = cache.kernel(one_entry, "fill_u16");
  CHECK(compiler.calls.load() == 1);
  CHECK(cache.kernel("fill_random_bf16").function != nullptr);
  CHECK(compiler.calls.load() == 2);
  CHECK(cache.kernel(one_entry, "fill_u16").function == u16.function);
  CHECK(compiler.calls.load() == 2);
  // The same entry running another kernel symbol resolves that symbol in a module of its own.
  KernelVariant other_symbol = one_entry;
  other_symbol.kernel_symbol = "fill_random_bf16";
  CHECK(cache.kernel(other_symbol, "fill_u16").function != u16.function);
  CHECK(compiler.calls.load() == 3);
  // Other checks are made on a load of their own, not skipped as a hit on a checked module.
  CHECK(cache.kernel("w8a16_gemm_m16").function != nullptr);
  CHECK(compiler.calls.load() == 5);
  KernelVariant other_checks = variant_named("w8a16_gemm_m16");
  other_checks.checks = {{"M16_N_TILE", 33}};
  CHECK_THROWS_WITH_AS(cache.kernel(other_checks, "w8a16_gemm_m16"),
                       doctest::Contains("M16_N_TILE = 32 but the host expects 33"), Error);
}
