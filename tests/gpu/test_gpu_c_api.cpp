// The C ABI on a device: for shapes where the plan names the skinny, deep skinny (on one
// chunk of K and in chunks) and stream-K entries, for split-K and for the automatic choice,
// the C functions give bit for bit what the C++ launchers give on the same operands, within
// the budget of the reference; the entries that take a C-owned workspace leave it zero.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/gpu_fixture.hpp"
#include "metrale/kernels.h"
#include "metrale/m16_plan.hpp"
#include "metrale/w8a16_gemm_m16_auto.hpp"
#include "metrale/w8a16_gemm_m16_skinny.hpp"
#include "metrale/w8a16_gemm_m16_splitk.hpp"
#include "metrale/w8a16_gemm_m16_streamk.hpp"

using namespace metrale;
using namespace metrale::test;

namespace {

struct CService {
  metrale_service* svc = nullptr;
  CService() {
    REQUIRE(metrale_service_create(0, &svc) == METRALE_OK);
    REQUIRE(metrale_warm_up(svc, nullptr, 0) == METRALE_OK);
  }
  ~CService() { metrale_service_destroy(svc); }
  CService(const CService&) = delete;
  CService& operator=(const CService&) = delete;
};

struct Plan {
  std::string entry;
  std::uint32_t split = 0, ctas = 0;
};

Plan plan(const CService& c, std::uint32_t m, std::uint32_t n, std::uint32_t k) {
  const char* entry = nullptr;
  Plan p;
  REQUIRE(metrale_plan_m16_gemm_entry(c.svc, m, n, k, &entry, &p.split, &p.ctas) == METRALE_OK);
  p.entry = entry;
  return p;
}

// Runs `c_call` (on the legacy stream, through the C service), then `cpp_call` on the
// re-poisoned problem, and checks both against each other and the reference.
void compare(const CService& c, Problem& p, const std::function<void()>& c_call,
             const std::function<void()>& cpp_call, const char* what) {
  gpu().backend.synchronize();  // the fills ran through the C++ service
  c_call();
  REQUIRE(metrale_synchronize(c.svc) == METRALE_OK);
  const std::vector<std::uint16_t> from_c = p.download_out();
  p.poison();
  cpp_call();
  p.run_reference();
  gpu().backend.synchronize();
  CHECK(p.download_out() == from_c);
  const OutputCheck r = check_output(p, from_c, p.download_ref());
  MESSAGE(fmt::format("{}: {} outputs, {} outside budget, {} written outside [m, n]", what,
                      r.budget.checked, r.budget.failures, r.written_outside));
  CHECK(r.budget.checked == std::uint64_t{p.m} * p.n);
  CHECK(r.budget.failures == 0);
  CHECK(r.written_outside == 0);
}

// The C deep function against the C++ launcher on `kernel`'s one chunk of K on `warps`
// warps, on contiguous rows.
void compare_deep(const CService& c, Problem& p, std::string_view kernel, std::uint32_t warps,
                  const char* what) {
  const std::uint32_t m = p.m, n = p.n, k = p.k;
  compare(
      c, p,
      [&] {
        REQUIRE(metrale_w8a16_gemm_m16_skinny_deep(c.svc, p.input.get().address,
                                                   p.weight.get().address, p.scale.get().address,
                                                   p.out.get().address, m, n, k, k, n,
                                                   nullptr) == METRALE_OK);
      },
      [&] {
        w8a16_gemm_m16_skinny_deep(gpu().backend, gpu().cache.kernel(kernel), p.input.get(),
                                   p.weight.get(), p.scale.get(), p.out.get(), m, n, k, k, n, {},
                                   warps, w8a16_gemm_m16_skinny_deep_one_chunk_blocks(k, warps),
                                   0);
      },
      what);
}

// The kernel and warps the C deep function runs for a contiguous problem: the plan's
// one-chunk deep launch for the device where the plan picks the deep entry, else the form
// the plan gives the deep entry (the 32-row form above 8 tokens where it suits the shape).
struct DeepForm {
  std::string kernel;
  std::uint32_t warps = 0;
  bool planned = false;
};

DeepForm c_deep_form(std::uint32_t m, std::uint32_t n, std::uint32_t k) {
  const M16Plan planned = plan_m16_gemm_one_chunk_deep(m, n, k, gpu().plan_device());
  if (planned.entry.starts_with("w8a16_gemm_m16_skinny_deep")) {
    return {std::string(planned.entry), planned.warps, true};
  }
  const SkinnyDeepForm form =
      w8a16_gemm_m16_skinny_deep32_form(m, n, k, gpu().sm_count(), false)
          .value_or(w8a16_gemm_m16_skinny_deep_form(m, n, gpu().sm_count()));
  return {std::string(form.kernel), form.warps, false};
}

// A zeroed workspace of `bytes` owned through the C service: `use(address)`, then the
// check that the launches left it zero, then the free.
void with_c_workspace(const CService& c, std::uint64_t bytes,
                      const std::function<void(std::uint64_t)>& use) {
  std::uint64_t workspace = 0;
  REQUIRE(metrale_alloc(c.svc, bytes, &workspace) == METRALE_OK);
  const std::vector<std::uint8_t> zeros(bytes, 0);
  REQUIRE(metrale_upload(c.svc, workspace, zeros.data(), bytes) == METRALE_OK);
  use(workspace);
  std::vector<std::uint8_t> left(bytes, 0xFF);
  REQUIRE(metrale_download(c.svc, left.data(), workspace, bytes) == METRALE_OK);
  CHECK(std::all_of(left.begin(), left.end(), [](std::uint8_t b) { return b == 0; }));
  REQUIRE(metrale_free(c.svc, workspace) == METRALE_OK);
}

}  // namespace

TEST_CASE("gpu: the C ABI's planned entries equal the C++ launchers, bit for bit") {
  const CService c;

  // DeepSeek-V3 kv_a at 5 tokens: the skinny entry, its chunks of K added through the
  // caller's workspace, which it leaves zero.
  {
    constexpr std::uint32_t m = 5, n = 576, k = 7168;
    const Plan pl = plan(c, m, n, k);
    CHECK(pl.entry == "metrale_w8a16_gemm_m16_skinny");
    CHECK(pl.split == 1);
    Problem p(m, n, k, k, n, 4241);
    std::uint64_t bytes = 0;
    REQUIRE(metrale_w8a16_gemm_m16_skinny_workspace_bytes(n, k, &bytes) == METRALE_OK);
    with_c_workspace(c, bytes, [&](std::uint64_t workspace) {
      compare(
          c, p,
          [&] {
            REQUIRE(metrale_w8a16_gemm_m16_skinny(c.svc, p.input.get().address,
                                                  p.weight.get().address, p.scale.get().address,
                                                  p.out.get().address, m, n, k, k, n, workspace,
                                                  bytes, nullptr) == METRALE_OK);
          },
          [&] {
            w8a16_gemm_m16_skinny(gpu().backend, gpu().cache.kernel("w8a16_gemm_m16_skinny"),
                                  p.input.get(), p.weight.get(), p.scale.get(), p.out.get(), m,
                                  n, k, k, n, gpu().streamk_workspace(),
                                  W8A16_GEMM_M16_SKINNY_WARPS, 0);
          },
          "C ABI skinny");
    });
  }

  // 16384 x 512 at 4 tokens: the skinny entry on one chunk of K on 4 warps, the plan's and
  // the C function's, no workspace.
  {
    constexpr std::uint32_t m = 4, n = 16384, k = 512, warps = 4;
    const Plan pl = plan(c, m, n, k);
    CHECK(pl.entry == "metrale_w8a16_gemm_m16_skinny");
    CHECK(plan_m16_gemm(m, n, k, gpu().plan_device()).warps == warps);
    Problem p(m, n, k, k, n, 4244);
    compare(
        c, p,
        [&] {
          REQUIRE(metrale_w8a16_gemm_m16_skinny(c.svc, p.input.get().address,
                                                p.weight.get().address, p.scale.get().address,
                                                p.out.get().address, m, n, k, k, n, 0, 0,
                                                nullptr) == METRALE_OK);
        },
        [&] {
          w8a16_gemm_m16_skinny(gpu().backend, gpu().cache.kernel("w8a16_gemm_m16_skinny"),
                                p.input.get(), p.weight.get(), p.scale.get(), p.out.get(), m, n,
                                k, k, n, {}, warps, 0);
        },
        "C ABI skinny at K = 512");
  }

  // Llama-3-8B o and down at 5 and 12 tokens (down at 12: the 32-row form on an H200, the
  // 16-row form on 8 warps on an H100), qkv at 12 (the three-per-SM form), DeepSeek-V3 q_b
  // at 3 (2 warps): the deep skinny entry in the form and on the warps the plan gives the
  // device, one chunk of K, no workspace.
  for (const auto& mnk : {std::array<std::uint32_t, 3>{5, 4096, 4096}, {12, 4096, 14336},
                          {12, 6144, 4096}, {3, 24576, 1536}}) {
    const auto m = std::get<0>(mnk);
    const auto n = std::get<1>(mnk);
    const auto k = std::get<2>(mnk);
    CAPTURE(m);
    CAPTURE(n);
    const Plan pl = plan(c, m, n, k);
    CHECK(pl.entry == "metrale_w8a16_gemm_m16_skinny_deep");
    const DeepForm form = c_deep_form(m, n, k);
    MESSAGE("C ABI deep skinny m=", m, " n=", n, ": ", form.kernel, " on ", form.warps, " warps");
    Problem p(m, n, k, k, n, 4240 + m);
    compare_deep(c, p, form.kernel, form.warps, "C ABI deep skinny");
  }

  // Llama-3-8B gate_up at one token: the C deep function runs the deep entry as the plan
  // without PDL runs it where the plan picks it (on a device of narrow DRAM bandwidth per
  // SM, CTAs of 8 warps in waves), else in the form the plan gives the deep entry.
  {
    constexpr std::uint32_t m = 1, n = 28672, k = 4096;
    const DeepForm form = c_deep_form(m, n, k);
    MESSAGE("C ABI deep skinny m=1 n=28672: ", form.kernel, " on ", form.warps, " warps (",
            form.planned ? "the plan's" : "the form's", ")");
    Problem p(m, n, k, k, n, 4250);
    compare_deep(c, p, form.kernel, form.warps, "C ABI deep skinny on 28672 rows");
  }

  // Narrow, deep layers (2304 x 16384 at 4 tokens, 1280 x 8192 at 8; above 8 tokens 1088 x
  // 20480 at 12 on 4 warps of 8 blocks, 1344 x 14336 at 16 and 1440 x 9216 at 10 on 4 of
  // 4): the plan for callers with a workspace names the deep entry in chunks of K, the form
  // plan_m16_gemm gives the device, its partials through the caller's workspace, which it
  // leaves zero.
  for (const auto& mnk : {std::array<std::uint32_t, 3>{4, 2304, 16384}, {8, 1280, 8192},
                          {12, 1088, 20480}, {16, 1344, 14336}, {10, 1440, 9216}}) {
    const auto m = std::get<0>(mnk);
    const auto n = std::get<1>(mnk);
    const auto k = std::get<2>(mnk);
    CAPTURE(m);
    CAPTURE(n);
    const char* entry = nullptr;
    Plan pl;
    REQUIRE(metrale_plan_m16_gemm_entry_chunked(c.svc, m, n, k, &entry, &pl.split, &pl.ctas) ==
            METRALE_OK);
    CHECK(std::string(entry) == "metrale_w8a16_gemm_m16_skinny_deep_chunked");
    const M16Plan cpp = plan_m16_gemm(m, n, k, gpu().plan_device());
    REQUIRE(cpp.entry == "w8a16_gemm_m16_skinny_deep");
    const std::uint32_t chunks = w8a16_gemm_m16_skinny_chunks(k, cpp.warps, cpp.warp_blocks);
    CHECK(chunks > 1);
    MESSAGE("C ABI deep skinny in chunks m=", m, " n=", n, ": ", cpp.warps, " warps of ",
            cpp.warp_blocks, " blocks, ", chunks, " chunks");
    std::uint64_t bytes = 0;
    REQUIRE(metrale_w8a16_gemm_m16_skinny_deep_chunked_workspace_bytes(c.svc, m, n, k, &bytes) ==
            METRALE_OK);
    CHECK(bytes == w8a16_gemm_m16_skinny_workspace_bytes(n, k, cpp.warps, cpp.warp_blocks));
    Problem p(m, n, k, k, n, 4250 + m);
    with_c_workspace(c, bytes, [&](std::uint64_t workspace) {
      compare(
          c, p,
          [&] {
            REQUIRE(metrale_w8a16_gemm_m16_skinny_deep_chunked(
                        c.svc, p.input.get().address, p.weight.get().address,
                        p.scale.get().address, p.out.get().address, m, n, k, k, n, workspace,
                        bytes, nullptr) == METRALE_OK);
          },
          [&] {
            w8a16_gemm_m16_skinny_deep(
                gpu().backend, gpu().cache.kernel("w8a16_gemm_m16_skinny_deep"), p.input.get(),
                p.weight.get(), p.scale.get(), p.out.get(), m, n, k, k, n,
                gpu().streamk_workspace(), cpp.warps, cpp.warp_blocks, 0);
          },
          "C ABI deep skinny in chunks");
    });
  }

  // A 28 MiB layer at 1 token, split-K over 2 CTAs per tile (128 tiles): the plan names
  // the deep entry there, the C function serves callers that pick their own split.
  {
    constexpr std::uint32_t m = 1, n = 4096, k = 7168, split = 2;
    Problem p(m, n, k, k, n, 4243);
    compare(
        c, p,
        [&] {
          REQUIRE(metrale_w8a16_gemm_m16_splitk(c.svc, p.input.get().address,
                                                p.weight.get().address, p.scale.get().address,
                                                p.out.get().address, m, n, k, k, n, split,
                                                nullptr) == METRALE_OK);
        },
        [&] {
          w8a16_gemm_m16_splitk(gpu().backend, gpu().cache.kernel("w8a16_gemm_m16_splitk"),
                                p.input.get(), p.weight.get(), p.scale.get(), p.out.get(), m, n,
                                k, k, n, split, 0);
        },
        "C ABI split-K");
  }

  // 8 tokens on a 32 MiB layer with K = 1152 (not a depth the deep entry takes): stream-K
  // on one CTA per SM, its workspace left zero.
  {
    constexpr std::uint32_t m = 8, n = 29184, k = 1152;
    const Plan pl = plan(c, m, n, k);
    CHECK(pl.entry == "metrale_w8a16_gemm_m16_streamk");
    CHECK(pl.ctas == gpu().sm_count());
    Problem p(m, n, k, k, n, 4242);
    std::uint64_t bytes = 0;
    REQUIRE(metrale_w8a16_gemm_m16_streamk_workspace_bytes(n, pl.ctas, &bytes) == METRALE_OK);
    with_c_workspace(c, bytes, [&](std::uint64_t workspace) {
      compare(
          c, p,
          [&] {
            REQUIRE(metrale_w8a16_gemm_m16_streamk(
                        c.svc, p.input.get().address, p.weight.get().address,
                        p.scale.get().address, p.out.get().address, m, n, k, k, n, workspace,
                        bytes, pl.ctas, nullptr) == METRALE_OK);
          },
          [&] {
            w8a16_gemm_m16_streamk(gpu().backend, gpu().cache.kernel("w8a16_gemm_m16_streamk"),
                                   p.input.get(), p.weight.get(), p.scale.get(), p.out.get(), m,
                                   n, k, k, n, gpu().streamk_workspace(), pl.ctas, 0);
          },
          "C ABI stream-K");
    });
  }

  // The automatic choice: the C function gives the C++ one's bits, on contiguous and
  // strided rows, with and without PDL (stream-K, the skinny entry, the deep entry in
  // chunks), and leaves the C workspace zero.
  for (const auto& mnk : {std::array<std::uint32_t, 3>{1, 28672, 4096}, {3, 576, 7168},
                          {12, 1344, 8192}}) {
    const auto m = std::get<0>(mnk);
    const auto n = std::get<1>(mnk);
    const auto k = std::get<2>(mnk);
    for (const int pdl : {0, 1}) {
      const std::uint32_t a = pdl != 0 ? k + 64 : k, cs = pdl != 0 ? n + 8 : n;
      CAPTURE(n);
      CAPTURE(pdl);
      std::uint64_t bytes = 0;
      REQUIRE(metrale_w8a16_gemm_m16_auto_workspace_bytes(c.svc, m, n, k, pdl, &bytes) ==
              METRALE_OK);
      Problem p(m, n, k, a, cs, 4300 + m + pdl);
      with_c_workspace(c, std::max<std::uint64_t>(bytes, 16), [&](std::uint64_t workspace) {
        compare(
            c, p,
            [&] {
              REQUIRE(metrale_w8a16_gemm_m16_auto(c.svc, p.input.get().address,
                                                  p.weight.get().address, p.scale.get().address,
                                                  p.out.get().address, m, n, k, a, cs, workspace,
                                                  bytes, pdl, nullptr) == METRALE_OK);
            },
            [&] {
              w8a16_gemm_m16_auto(gpu().backend, kernel_lookup(gpu().cache), gpu().plan_device(),
                                  p.input.get(), p.weight.get(), p.scale.get(), p.out.get(), m,
                                  n, k, a, cs, gpu().streamk_workspace(), 0, pdl != 0);
            },
            "C ABI automatic choice");
      });
    }
  }
}
