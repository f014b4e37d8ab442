// The callers on a device: the dense FFN for 17..32 rows (two launches on row halves)
// under each METRALE_FFN_M16_TC_NTILE setting, and the multi-sequence QKV buffer where
// each strided launch writes its slot and leaves its neighbours untouched.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fmt/format.h>

#include "gpu/gpu_fixture.hpp"
#include "metrale/dense_ffn.hpp"
#include "metrale/error.hpp"
#include "metrale/host_reference.hpp"
#include "metrale/w8a16_gemv_batch16.hpp"

using namespace metrale;
using namespace metrale::test;

namespace {

// Sets (or unsets, for nullptr) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    if (value != nullptr) setenv(name, value, 1); else unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_) setenv(name_, old_.c_str(), 1); else unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

}  // namespace

TEST_CASE("gpu: dense FFN for 17, 24 and 32 rows under NTILE unset / 32 / 64 / junk") {
  const TargetLevers levers = target_levers(gpu().backend.target());
  const std::uint32_t n = 4096 + 32, k = 7168;
  std::uint32_t seed = 900;
  for (const char* ntile : {static_cast<const char*>(nullptr), "32", "64", "junk"}) {
    CAPTURE(ntile != nullptr ? ntile : "unset");
    ScopedEnv env("METRALE_FFN_M16_TC_NTILE", ntile);
    if (ntile != nullptr && std::string(ntile) == "junk") {
      CHECK_THROWS_WITH_AS(m16_tc_kernel(gpu().cache),
                           "METRALE_FFN_M16_TC_NTILE='junk' is not an accepted value "
                           "(accepted: unset, 32, 64)",
                           Error);
      continue;
    }
    const M16TcKernel sel = m16_tc_kernel(gpu().cache);
    CHECK(sel.n_tile == (ntile != nullptr && std::string(ntile) == "64" ? 64u : 32u));
    for (std::uint32_t rows : {1u, 16u, 17u, 24u, 32u}) {
      CAPTURE(rows);
      // 32 rows of activations and outputs: two 16-row problems back to back.
      Problem lo(16, n, k, k, n, ++seed), hi(16, n, k, k, n, ++seed);
      DeviceBuffer input(gpu().backend, std::size_t{32} * k * 2);
      DeviceBuffer output(gpu().backend, std::size_t{32} * n * 2 + 512);
      // Rows 0..15 come from lo's activations, rows 16..31 from hi's; same weights (lo's).
      std::vector<std::uint16_t> x(std::size_t{32} * k);
      gpu().backend.download(x.data(), lo.input.get(), std::size_t{16} * k * 2);
      gpu().backend.download(x.data() + std::size_t{16} * k, hi.input.get(), std::size_t{16} * k * 2);
      gpu().backend.upload(input.get(), x.data(), x.size() * 2);
      std::vector<std::uint16_t> poison(output.size() / 2, kPoison);
      gpu().backend.upload(output.get(), poison.data(), output.size());
      dense_ffn_m16_tc(sel, levers, gpu().backend, input.get(), lo.weight.get(), lo.scale.get(),
                       output.get(), rows, n, k, 0);
      // Reference for each half through the scalar kernel.
      lo.m = std::min(rows, 16u);
      lo.run_reference();
      if (rows > 16) {
        gpu().backend.fill_bytes(hi.ref.get(), 0xFF, hi.ref.size());
        w8a16_gemv_batch16(gpu().backend, gpu().cache.kernel("w8a16_gemv_batch16"),
                           hi.input.get(), lo.weight.get(), lo.scale.get(), hi.ref.get(),
                           rows - 16, n, k, 0);
      }
      std::vector<std::uint16_t> got(output.size() / 2);
      gpu().backend.download(got.data(), output.get(), output.size());
      const auto ref_lo = lo.download_ref();
      const auto ref_hi = hi.download_ref();
      BudgetReport budget;
      for (std::uint32_t row = 0; row < rows; ++row) {
        const std::uint16_t* r = row < 16 ? ref_lo.data() + std::size_t{row} * n
                                          : ref_hi.data() + std::size_t{row - 16} * n;
        check_row_budget(budget, got.data() + std::size_t{row} * n, r, n, k, row);
      }
      std::uint64_t outside = 0;
      for (std::size_t e = std::size_t{rows} * n; e < got.size(); ++e) outside += got[e] != kPoison;
      CHECK_MESSAGE(budget.failures == 0, budget.first_failure);
      CHECK(budget.checked == std::uint64_t{rows} * n);
      CHECK(outside == 0);
    }
  }
}

TEST_CASE("gpu: strided QKV writes each slot of every row and leaves the rest untouched") {
  const TargetLevers levers = target_levers(gpu().backend.target());
  const std::uint32_t k = 4096, q = 4096, kv = 1024, per_seq = q + 2 * kv;
  const QkvSlot slots[] = {{0, q}, {q, kv}, {q + kv, kv}};
  const KernelHandle strided = gpu().cache.kernel("w8a16_gemm_m16_strided");
  for (std::uint32_t n_seq : {1u, 7u, 16u}) {
    CAPTURE(n_seq);
    DeviceBuffer qkv(gpu().backend, std::size_t{16} * per_seq * 2);
    std::vector<std::uint16_t> poison(std::size_t{16} * per_seq, kPoison);
    gpu().backend.upload(qkv.get(), poison.data(), qkv.size());
    std::vector<std::vector<std::uint16_t>> refs;
    std::uint32_t seed = 300 + n_seq;
    std::vector<Problem> problems;
    std::uint64_t neighbours_changed = 0;
    for (const QkvSlot& slot : slots) {
      problems.emplace_back(n_seq, slot.width, k, k + 64, slot.width, ++seed);
      Problem& p = problems.back();
      std::vector<std::uint16_t> before(std::size_t{16} * per_seq), after(before.size());
      gpu().backend.download(before.data(), qkv.get(), qkv.size());
      qkv_projection_m16_tc(levers, gpu().backend, strided, p.input.get(), k + 64,
                            p.weight.get(), p.scale.get(), qkv.get(), per_seq, slot, n_seq, k, 0);
      gpu().backend.download(after.data(), qkv.get(), qkv.size());
      // Only this slot of rows 0..n_seq may change.
      for (std::size_t e = 0; e < after.size(); ++e) {
        const std::size_t row = e / per_seq, col = e % per_seq;
        const bool mine = row < n_seq && col >= slot.offset && col < slot.offset + slot.width;
        if (!mine) neighbours_changed += after[e] != before[e];
      }
      p.run_reference();
      refs.push_back(p.download_ref());
    }
    CHECK(neighbours_changed == 0);
    std::vector<std::uint16_t> got(std::size_t{16} * per_seq);
    gpu().backend.download(got.data(), qkv.get(), qkv.size());
    BudgetReport budget;
    for (std::uint32_t row = 0; row < n_seq; ++row) {
      for (std::size_t s = 0; s < 3; ++s) {
        check_row_budget(budget, got.data() + std::size_t{row} * per_seq + slots[s].offset,
                  refs[s].data() + std::size_t{row} * slots[s].width, slots[s].width, k, row);
      }
    }
    std::uint64_t outside = 0;
    for (std::size_t e = std::size_t{n_seq} * per_seq; e < got.size(); ++e) {
      outside += got[e] != kPoison;
    }
    CHECK_MESSAGE(budget.failures == 0, budget.first_failure);
    CHECK(budget.checked == std::uint64_t{n_seq} * per_seq);
    CHECK(outside == 0);
  }
}
