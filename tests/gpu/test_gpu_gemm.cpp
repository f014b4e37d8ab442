// The tensor-core entries against the scalar reference on fresh random data: every entry,
// every m in 1..16, N tails, four depths; outputs poisoned and guarded so unwritten
// elements and writes outside [m, n] are caught. Then a random sweep for false
// failures, and repeat runs for determinism.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <random>
#include <tuple>

#include "gpu/gpu_fixture.hpp"

using namespace metrale;
using namespace metrale::test;

namespace {

// Runs `entry` and the reference on `p` and checks the result.
OutputCheck run_and_check(const TcEntry& entry, Problem& p) {
  entry.launch(p, 0);
  p.run_reference();
  gpu().backend.synchronize();
  return check_output(p, p.download_out(), p.download_ref());
}

void report(const char* what, const BudgetReport& r, std::uint64_t outside) {
  MESSAGE(fmt::format("{}: {} outputs checked, {} outside budget, max ULP (outside floor) {}, "
                      "max |err| {:.3g}, max |err|/floor {:.3g}, {} writes outside [m, n]",
                      what, r.checked, r.failures, r.max_ulp, r.max_abs, r.max_abs_over_floor,
                      outside));
}

}  // namespace

TEST_CASE("gpu: every entry, m 1..16, N tails, K depths, within budget and in bounds") {
  const std::uint32_t ns[] = {1, 31, 32, 33, 576, 4096, 4096 + 32, 36864};
  const std::uint32_t ks[] = {128, 256, 7168, 18432};
  std::uint32_t seed = 1;
  BudgetReport total;
  std::uint64_t outside = 0;
  for (const TcEntry& entry : tc_entries()) {
    for (std::uint32_t n : ns) {
      for (std::uint32_t k : ks) {
        const std::uint32_t a_stride = entry.strided ? k + 40 : k;
        const std::uint32_t c_stride = entry.strided ? n + 7 : n;
        Problem p(16, n, k, a_stride, c_stride, seed);
        for (std::uint32_t m = 1; m <= 16; ++m) {
          CAPTURE(entry.name);
          CAPTURE(n);
          CAPTURE(k);
          CAPTURE(m);
          p.m = m;
          p.refill(++seed);
          const OutputCheck c = run_and_check(entry, p);
          CHECK_MESSAGE(c.budget.failures == 0, c.budget.first_failure);
          CHECK(c.written_outside == 0);
          total.merge(c.budget);
          outside += c.written_outside;
        }
      }
    }
  }
  report("sweep", total, outside);
  CHECK(total.ok());
}

TEST_CASE("gpu: no false failures over random shapes, rows and value ranges") {
  std::mt19937 engine(20261130);
  auto rng = [&] { return static_cast<std::uint32_t>(engine()); };
  const Ranges ranges[] = {
      {1.0f, 0x7E, 1.0f / 1024, 1.0f / 64},   // full FP8 range
      {1e-3f, 0x7E, 1.0f / 1024, 1.0f / 64},  // small activations
      {50.0f, 0x50, 1e-4f, 2e-4f},            // large activations, narrow weights
      {1.0f, 0x38, 0.5f, 2.0f},               // |w| <= 1, unit scales
  };
  BudgetReport total;
  std::uint64_t outside = 0;
  for (int trial = 0; trial < 120; ++trial) {
    const TcEntry& entry = tc_entries()[trial % tc_entries().size()];
    const std::uint32_t n = 1 + rng() % 6000;
    const std::uint32_t k = 128 * (1 + rng() % 64);
    const std::uint32_t m = 1 + rng() % 16;
    const Ranges& r = ranges[trial % 4];
    const std::uint32_t a_stride = entry.strided ? k + 8 * (rng() % 16) : k;
    const std::uint32_t c_stride = entry.strided ? n + rng() % 9 : n;
    CAPTURE(entry.name);
    CAPTURE(n);
    CAPTURE(k);
    CAPTURE(m);
    Problem p(m, n, k, a_stride, c_stride, 5000 + trial, r);
    const OutputCheck c = run_and_check(entry, p);
    CHECK_MESSAGE(c.budget.failures == 0, c.budget.first_failure);
    CHECK(c.written_outside == 0);
    total.merge(c.budget);
    outside += c.written_outside;
  }
  report("random sweep (120 problems)", total, outside);
  CHECK(total.ok());
}

TEST_CASE("gpu: results are bit-identical from run to run") {
  // 5 tokens runs each entry's build for m <= 8, 16 its build above 8; the first run is
  // held to the budget, so that a run that writes nothing cannot pass by repeating itself.
  for (const TcEntry& entry : tc_entries()) {
    for (const std::uint32_t m : {5u, 16u}) {
      CAPTURE(entry.name);
      CAPTURE(m);
      Problem p(m, 4096 + 32, 7168, entry.strided ? 7168 + 8 : 7168,
                entry.strided ? 4096 + 40 : 4096 + 32, 77 + m);
      const OutputCheck c = run_and_check(entry, p);  // Problem comes poisoned
      CHECK_MESSAGE(c.budget.failures == 0, c.budget.first_failure);
      CHECK(c.budget.checked > 0);
      CHECK(c.written_outside == 0);
      const auto first = p.download_out();
      for (int rep = 0; rep < 5; ++rep) {
        p.poison();
        entry.launch(p, 0);
        CHECK(p.download_out() == first);
      }
    }
  }
}

TEST_CASE("gpu: the skinny entry's chunks as a cluster give the bits of the handoff through L2") {
  // DeepSeek-V3 kv_a (7 chunks on 8 warps, 4 on 16 and with two blocks per warp) and a
  // tail of rows, at 1, 5, 9 and 16 tokens.
  std::uint64_t compared = 0;
  for (const std::uint32_t n : {576u, 577u}) {
    for (const std::uint32_t m : {1u, 5u, 9u, 16u}) {
      Problem p(m, n, 7168, 7168, n, 900 + m + n);
      for (const auto& form :
           {std::pair{8u, false}, std::pair{16u, false}, std::pair{8u, true}}) {
        const auto warps = form.first;
        const auto two_blocks = form.second;
        CAPTURE(n);
        CAPTURE(m);
        CAPTURE(warps);
        CAPTURE(two_blocks);
        p.poison();
        skinny_entry(warps, two_blocks).launch(p, 0);
        gpu().backend.synchronize();
        const auto through_l2 = p.download_out();
        p.poison();
        skinny_entry(warps, two_blocks, false, true).launch(p, 0);
        gpu().backend.synchronize();
        CHECK(p.download_out() == through_l2);
        compared += std::uint64_t{m} * n;
      }
    }
  }
  MESSAGE(fmt::format("skinny chunks as a cluster: {} outputs identical to the handoff through L2",
                      compared));
}

TEST_CASE("gpu: a grid spread over the SMs gives the bits of the same grid unspread") {
  // kv_a on the skinny entry (252 CTAs, two to an SM), q_a on the deep kernel in chunks
  // (384, three to an SM) and 2048 rows on the deep kernel's one chunk of 16 warps (128
  // CTAs, one to an SM), with PDL as the plan runs them, at 1, 5, 9 and 16 tokens.
  std::uint64_t compared = 0;
  for (const std::uint32_t m : {1u, 5u, 9u, 16u}) {
    for (const auto& layer :
         {std::tuple{576u, skinny_entry(8, false, true, false, 2), skinny_entry(8, false, true)},
          std::tuple{1536u, skinny_deep_entry(8, 2, true, "w8a16_gemm_m16_skinny_deep", 3),
                     skinny_deep_entry(8, 2, true)},
          std::tuple{2048u, skinny_deep_entry(16, 1024, true, "w8a16_gemm_m16_skinny_deep", 1),
                     skinny_deep_entry(16, 1024, true)}}) {
      const auto& [n_bound, spread, plain] = layer;
      const std::uint32_t n = n_bound;
      CAPTURE(m);
      CAPTURE(n);
      Problem p(m, n, 7168, 7168, n, 700 + m + n);
      p.poison();
      plain.launch(p, 0);
      gpu().backend.synchronize();
      const auto unspread = p.download_out();
      p.poison();
      spread.launch(p, 0);
      gpu().backend.synchronize();
      CHECK(p.download_out() == unspread);
      compared += std::uint64_t{m} * n;
    }
  }
  MESSAGE(fmt::format("grids spread over the SMs: {} outputs identical to the same grids unspread",
                      compared));
}
