// Programmatic dependent launches read what the kernel before them wrote. Every `+pdl`
// entry of the suite runs right behind a kernel that releases its dependents at once,
// waits about 100 us, and only then writes the activations: a launch that read the
// activations (or wrote anything) before its wait for the preceding grid would use the
// operands of the problem's first fill, far outside the budget against the reference.
// And two launches of each right behind each other keep both results.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <cstdint>
#include <functional>
#include <string>

#include "gpu/gpu_fixture.hpp"
#include "metrale/kernel_launch.hpp"

using namespace metrale;
using namespace metrale::test;

namespace {

constexpr const char* kLateWriter = R"(
extern "C" __global__ void late_writer(unsigned short* x, unsigned count, unsigned seed,
                                       unsigned delay_ns) {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < delay_ns);
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
       i += gridDim.x * blockDim.x) {
    unsigned h = (i + seed) * 2654435761u;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    const float v = (h >> 8) * (2.0f / 16777216.0f) - 1.0f;  // uniform in [-1, 1)
    x[i] = static_cast<unsigned short>(__float_as_uint(v) >> 16);
  }
}
)";

// Whether this device runs programmatic dependent launches (sm_90 on); says so if not.
bool pdl_device() {
  const CudaBackend& b = gpu().backend;
  if (b.info().cc_major >= 9) return true;
  MESSAGE("programmatic dependent launch needs sm_90 or newer; not checked on ", b.target());
  return false;
}

// `check(entry, tokens)` for every `+pdl` entry of the suite at 1 and 16 tokens; the
// number of entries.
std::uint32_t for_each_pdl_entry(
    const std::function<void(const TcEntry&, std::uint32_t tokens)>& check) {
  std::uint32_t entries = 0;
  for (const TcEntry& entry : tc_entries()) {
    if (entry.name.find("pdl") == std::string::npos) continue;
    ++entries;
    for (const std::uint32_t tokens : {1u, 16u}) {
      CAPTURE(entry.name);
      CAPTURE(tokens);
      check(entry, tokens);
    }
  }
  return entries;
}

}  // namespace

TEST_CASE("gpu: a programmatic dependent launch reads the activations written before it") {
  if (!pdl_device()) return;
  CudaBackend& b = gpu().backend;
  auto module = load_test_kernels("late_writer", kLateWriter);
  const KernelHandle writer{module->function("late_writer"), b.context(), "late_writer"};
  const std::uint32_t entries = for_each_pdl_entry([&](const TcEntry& entry,
                                                       std::uint32_t tokens) {
    const std::uint32_t n = 2048 + 33, k = 7168;
    Problem p(tokens, n, k, k + 8, n + 8, 4000 + tokens);
    KernelLaunch(b, writer)
        .grid({1, 1, 1})
        .block({256, 1, 1})
        .arg_ptr(p.input.get())
        .arg_u32(static_cast<std::uint32_t>(p.input.size() / 2))
        .arg_u32(977 + tokens)
        .arg_u32(100000)
        .launch(0);
    entry.launch(p, 0);
    p.run_reference();
    b.synchronize();
    const OutputCheck c = check_output(p, p.download_out(), p.download_ref());
    CHECK_MESSAGE(c.budget.failures == 0, c.budget.first_failure);
    CHECK(c.budget.checked > 0);
    CHECK(c.written_outside == 0);
  });
  MESSAGE(fmt::format("{} programmatic dependent entries behind a late writer", entries));
  CHECK(entries >= 10);
}

TEST_CASE("gpu: back-to-back programmatic dependent launches of one entry keep their results") {
  // The way an engine (and the benchmark's graph) runs them: one launch right behind the
  // other, both on the suite's one workspace. A launch that touched the workspace or its
  // outputs before its wait for the grid before it would corrupt that grid's reduction,
  // and the first problem's output would leave the budget; each round checks both.
  if (!pdl_device()) return;
  CudaBackend& b = gpu().backend;
  const std::uint32_t entries = for_each_pdl_entry([&](const TcEntry& entry,
                                                       std::uint32_t tokens) {
    const std::uint32_t n = 2048 + 33, k = 7168;
    Problem first(tokens, n, k, k + 8, n + 8, 6000 + tokens);
    Problem second(tokens, n, k, k + 8, n + 8, 7000 + tokens);
    for (int round = 0; round < 3; ++round) {
      CAPTURE(round);
      for (Problem* p : {&first, &second}) {
        p->poison();
        p->run_reference();
      }
      entry.launch(first, 0);
      entry.launch(second, 0);
      b.synchronize();
      for (const Problem* p : {&first, &second}) {
        const OutputCheck c = check_output(*p, p->download_out(), p->download_ref());
        CHECK_MESSAGE(c.budget.failures == 0, c.budget.first_failure);
        CHECK(c.budget.checked > 0);
        CHECK(c.written_outside == 0);
      }
    }
  });
  MESSAGE(fmt::format("{} programmatic dependent entries launched back to back", entries));
  CHECK(entries >= 10);
}
