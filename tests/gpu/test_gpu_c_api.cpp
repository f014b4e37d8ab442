// The C ABI on a device: the plan's stream-K choice, called through the C functions on a
// C-owned workspace, gives bit for bit what the C++ launcher gives on the same operands
// and CTAs, within the budget of the reference, and leaves the workspace zero.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu/gpu_fixture.hpp"
#include "metrale/kernels.h"
#include "metrale/w8a16_gemm_m16_streamk.hpp"

using namespace metrale;
using namespace metrale::test;

TEST_CASE("gpu: the C ABI's planned stream-K equals the C++ launcher, bit for bit") {
  metrale_service* svc = nullptr;
  REQUIRE(metrale_service_create(0, &svc) == METRALE_OK);
  REQUIRE(metrale_warm_up(svc, nullptr, 0) == METRALE_OK);
  // 8 tokens on a 56 MiB layer (Llama-3-8B down): the plan names stream-K, one CTA per SM.
  constexpr std::uint32_t m = 8, n = 4096, k = 14336;
  const char* entry = nullptr;
  std::uint32_t split = 0, ctas = 0;
  REQUIRE(metrale_plan_m16_gemm_entry(svc, m, n, k, &entry, &split, &ctas) == METRALE_OK);
  CHECK(std::string(entry) == "metrale_w8a16_gemm_m16_streamk");
  CHECK(ctas == gpu().sm_count());

  Problem p(m, n, k, k, n, 4242);
  gpu().backend.synchronize();  // the fills ran on the library's side of the context
  std::uint64_t bytes = 0;
  REQUIRE(metrale_w8a16_gemm_m16_streamk_workspace_bytes(n, ctas, &bytes) == METRALE_OK);
  std::uint64_t workspace = 0;
  REQUIRE(metrale_alloc(svc, bytes, &workspace) == METRALE_OK);
  const std::vector<std::uint8_t> zeros(bytes, 0);
  REQUIRE(metrale_upload(svc, workspace, zeros.data(), bytes) == METRALE_OK);
  REQUIRE(metrale_w8a16_gemm_m16_streamk(svc, p.input.get().address, p.weight.get().address,
                                         p.scale.get().address, p.out.get().address, m, n, k,
                                         k, n, workspace, bytes, ctas, nullptr) == METRALE_OK);
  REQUIRE(metrale_synchronize(svc) == METRALE_OK);
  const std::vector<std::uint16_t> from_c = p.download_out();
  std::vector<std::uint8_t> left(bytes, 0xFF);
  REQUIRE(metrale_download(svc, left.data(), workspace, bytes) == METRALE_OK);
  CHECK(std::all_of(left.begin(), left.end(), [](std::uint8_t b) { return b == 0; }));

  p.poison();
  w8a16_gemm_m16_streamk(gpu().backend, gpu().cache.kernel("w8a16_gemm_m16_streamk"),
                         p.input.get(), p.weight.get(), p.scale.get(), p.out.get(), m, n, k, k,
                         n, gpu().streamk_workspace(), ctas, 0);
  p.run_reference();
  gpu().backend.synchronize();
  CHECK(p.download_out() == from_c);
  const OutputCheck c = check_output(p, from_c, p.download_ref());
  MESSAGE("C ABI stream-K: " << c.budget.checked << " outputs, " << c.budget.failures
                             << " outside budget, " << c.written_outside
                             << " written outside [m, n]");
  CHECK(c.budget.checked == std::uint64_t{m} * n);
  CHECK(c.budget.failures == 0);
  CHECK(c.written_outside == 0);

  REQUIRE(metrale_free(svc, workspace) == METRALE_OK);
  metrale_service_destroy(svc);
}
