// Several GPUs in one process: a backend and module cache per device, threads bound to
// different GPUs launching at once (the seed's entries, split-K and the deep skinny
// entry), results bit-identical to the same launches on one GPU, and handles refused in a
// context they do not belong to. Skipped (and counted as skipped) on machines with fewer
// than two GPUs.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <memory>
#include <thread>
#include <vector>

#include "driver_api.hpp"
#include "gpu/gpu_fixture.hpp"
#include "metrale/cuda_backend.hpp"
#include "metrale/error.hpp"
#include "metrale/fill_random.hpp"
#include "metrale/kernel_launch.hpp"
#include "metrale/module_cache.hpp"
#include "metrale/oracle.hpp"
#include "metrale/w8a16_gemm_m16.hpp"
#include "metrale/w8a16_gemm_m16_skinny.hpp"
#include "metrale/w8a16_gemm_m16_splitk.hpp"
#include "metrale/w8a16_gemv_batch16.hpp"

using namespace metrale;

namespace {

int usable_devices() {
  try {
    return cuda_device_count();
  } catch (const Error&) {
    return 0;
  }
}

struct Device {
  explicit Device(int ordinal) : backend(ordinal), cache(backend) {}
  CudaBackend backend;
  ModuleCache cache;
};

struct Shape {
  std::uint32_t m, n, k;
};

// Per shape: the tensor-core entries, then the scalar reference, in this order.
constexpr std::size_t kTensorCoreEntries = 4;
constexpr std::size_t kRunsPerShape = kTensorCoreEntries + 1;

// Runs every tensor-core entry and the reference on `dev` for each shape, with operands
// generated from the shape's seed, and returns all outputs in order.
std::vector<std::vector<std::uint16_t>> run_all(Device& dev, const std::vector<Shape>& shapes) {
  std::vector<std::vector<std::uint16_t>> outputs;
  std::uint32_t seed = 17;
  for (const Shape& s : shapes) {
    DeviceBuffer x(dev.backend, std::size_t{16} * s.k * 2);
    DeviceBuffer w(dev.backend, std::size_t{s.n} * s.k);
    DeviceBuffer sc(dev.backend, std::size_t{(s.n + 127) / 128} * (s.k / 128) * 4);
    DeviceBuffer out(dev.backend, std::size_t{16} * s.n * 2);
    ++seed;
    fill_random_bf16(dev.cache, x.get(), 16 * s.k, seed, 1.0f);
    fill_random_fp8(dev.cache, w.get(), s.n * s.k, seed + 1, 0x7E);
    fill_random_f32(dev.cache, sc.get(), static_cast<std::uint32_t>(sc.size() / 4), seed + 2,
                    1.0f / 1024, 1.0f / 64);
    for (std::size_t entry = 0; entry < kRunsPerShape; ++entry) {
      fill_u16(dev.cache, out.get(), 16 * s.n, 0xFFFF);
      switch (entry) {
        case 0:
          w8a16_gemm_m16(dev.backend, dev.cache.kernel("w8a16_gemm_m16"), x.get(), w.get(),
                         sc.get(), out.get(), s.m, s.n, s.k, 0);
          break;
        case 1:
          w8a16_gemm_m16_n64(dev.backend, dev.cache.kernel("w8a16_gemm_m16_n64"), x.get(),
                             w.get(), sc.get(), out.get(), s.m, s.n, s.k, 0);
          break;
        case 2:
          w8a16_gemm_m16_splitk(dev.backend, dev.cache.kernel("w8a16_gemm_m16_splitk"),
                                x.get(), w.get(), sc.get(), out.get(), s.m, s.n, s.k, s.k, s.n,
                                4, 0);
          break;
        case 3: {
          // The deep skinny entry on one chunk of K, in the form and on the warps the plan
          // gives this GPU.
          const SkinnyDeepForm form = w8a16_gemm_m16_skinny_deep_form(
              s.m, s.n, static_cast<std::uint32_t>(dev.backend.info().sm_count));
          const std::uint32_t warps = form.warps;
          w8a16_gemm_m16_skinny_deep(dev.backend, dev.cache.kernel(form.kernel),
                                     x.get(), w.get(), sc.get(), out.get(), s.m, s.n, s.k, s.k,
                                     s.n, {}, warps,
                                     w8a16_gemm_m16_skinny_deep_one_chunk_blocks(s.k, warps), 0);
          break;
        }
        default:
          w8a16_gemv_batch16(dev.backend, dev.cache.kernel("w8a16_gemv_batch16"), x.get(),
                             w.get(), sc.get(), out.get(), s.m, s.n, s.k, 0);
      }
      std::vector<std::uint16_t> host(std::size_t{s.m} * s.n);
      dev.backend.download(host.data(), out.get(), host.size() * 2);
      outputs.push_back(std::move(host));
    }
  }
  return outputs;
}

}  // namespace

TEST_CASE("gpu: two GPUs at once give the single-GPU results" *
          doctest::skip(usable_devices() < 2)) {
  const std::vector<Shape> shapes = {{1, 4096, 4096}, {16, 576, 7168}, {9, 28672, 4096},
                                     {16, 7168, 18432}};
  // The single-GPU run on device 0 alone.
  std::vector<std::vector<std::uint16_t>> alone;
  {
    Device d0(0);
    alone = run_all(d0, shapes);
  }
  // Both GPUs from two threads at the same time.
  std::vector<std::vector<std::uint16_t>> results[2];
  std::string errors[2];
  std::vector<std::thread> threads;
  for (int ordinal = 0; ordinal < 2; ++ordinal) {
    threads.emplace_back([&, ordinal] {
      try {
        Device dev(ordinal);
        for (int round = 0; round < 3; ++round) results[ordinal] = run_all(dev, shapes);
      } catch (const std::exception& e) {
        errors[ordinal] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(errors[0].empty());
  CHECK(errors[1].empty());
  REQUIRE(results[0].size() == alone.size());
  REQUIRE(results[1].size() == alone.size());
  std::uint64_t compared = 0;
  for (std::size_t i = 0; i < alone.size(); ++i) {
    CAPTURE(i);
    CHECK(results[0][i] == alone[i]);
    CHECK(results[1][i] == alone[i]);
    compared += alone[i].size();
  }
  // And the tensor-core outputs hold the budget against the reference (the last run of
  // each shape).
  BudgetReport budget;
  for (std::size_t s = 0; s < shapes.size(); ++s) {
    const auto& ref = alone[kRunsPerShape * s + kTensorCoreEntries];
    for (std::size_t e = 0; e < kTensorCoreEntries; ++e) {
      const auto& got = results[1][kRunsPerShape * s + e];
      for (std::uint32_t i = 0; i < shapes[s].m; ++i) {
        check_row_budget(budget, got.data() + std::size_t{i} * shapes[s].n,
                         ref.data() + std::size_t{i} * shapes[s].n, shapes[s].n, shapes[s].k, i);
      }
    }
  }
  CHECK_MESSAGE(budget.failures == 0, budget.first_failure);
  MESSAGE(fmt::format("two GPUs: {} outputs identical to the single-GPU run; budget over {} "
                      "outputs, max ULP {}",
                      2 * compared, budget.checked, budget.max_ulp));
}

TEST_CASE("gpu: a handle from one GPU is refused on the other" *
          doctest::skip(usable_devices() < 2)) {
  Device d0(0), d1(1);
  const KernelHandle h0 = d0.cache.kernel("fill_u16");
  DeviceBuffer buf(d1.backend, 64);
  CHECK_THROWS_WITH_AS(test::fill_u16_launch(d1.backend, h0, buf.get(), 32).launch(0),
                       doctest::Contains("belongs to another CUDA context"), Error);
}

TEST_CASE("gpu: a call on one GPU's backend gives the thread back the other's context" *
          doctest::skip(usable_devices() < 2)) {
  Device d0(0), d1(1);
  const auto current = [] {
    CUcontext c = nullptr;
    REQUIRE(driver::api().cuCtxGetCurrent(&c) == CUDA_SUCCESS);
    return reinterpret_cast<ContextId>(c);
  };
  // The engine's thread works on GPU 1 (its runtime API's device), then calls into GPU 0's
  // service: a first use (compile, load, checks), memory, a launch, a synchronisation.
  d1.backend.make_current();
  REQUIRE(current() == d1.backend.context());
  const KernelHandle fill = d0.cache.kernel("fill_u16");
  CHECK(current() == d1.backend.context());
  {
    DeviceBuffer buf(d0.backend, 64);
    CHECK(current() == d1.backend.context());
    test::fill_u16_launch(d0.backend, fill, buf.get(), 32).launch(0);
    d0.backend.synchronize();
    CHECK(current() == d1.backend.context());
  }
  CHECK(current() == d1.backend.context());
}
