// Stream-K's first contributor of a split tile waits for the tile's other CTAs. They
// publish their partials before they wait on anything, so the launch must finish with
// only a few of its CTAs resident at a time. Here a kernel on another stream holds all
// SMs but two until stream-K's launch (and a flag set after it on its stream) is done:
// if stream-K needed its whole grid resident, it would finish only when the holder gives
// up after its timeout, and the holder reports that.
#include <doctest/doctest.h>

#include <chrono>
#include <thread>

#include "driver_api.hpp"
#include "gpu/gpu_fixture.hpp"
#include "gpu/owned_stream.hpp"
#include "metrale/error.hpp"
#include "metrale/kernel_launch.hpp"

using namespace metrale;
using namespace metrale::test;

namespace {

constexpr const char* kHolder = R"(
typedef unsigned int u32;
typedef unsigned long long u64;
__device__ __forceinline__ u64 now_ns() {
  u64 t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
// One CTA per SM (the launch asks for more shared memory than half an SM has): spins
// until *release is set or timeout_ns passes; *released counts the CTAs that saw it.
extern "C" __global__ void hold(const volatile u32* release, u32* released, u32* started,
                                u64 timeout_ns) {
  if (threadIdx.x != 0) return;
  atomicAdd(started, 1u);
  const u64 start = now_ns();
  while (*release == 0) {
    if (now_ns() - start > timeout_ns) return;
  }
  atomicAdd(released, 1u);
}
extern "C" __global__ void set_flag(u32* flag) { *flag = 1u; }
)";

}  // namespace

TEST_CASE("gpu: stream-K finishes with two SMs free while another stream holds the rest") {
  CudaBackend& b = gpu().backend;
  const std::uint32_t sms = gpu().sm_count();
  auto module = load_test_kernels("streamk_holder", kHolder);
  const KernelHandle hold{module->function("hold"), b.context(), "hold"};
  const KernelHandle set_flag{module->function("set_flag"), b.context(), "set_flag"};
  const std::uint32_t holder_smem = 160 * 1024;  // more than half an SM: one per SM
  // Loaded before anything runs: nothing below may wait for the whole context.
  const KernelHandle streamk = gpu().cache.kernel("w8a16_gemm_m16_streamk");
  // m = 1 and 16 (both builds); a wide layer, and a narrow one whose tiles span dozens of
  // CTAs, so that a waiting CTA waits on CTAs far beyond the resident ones.
  const struct {
    std::uint32_t m, n, k;
  } shapes[] = {{1, 4096, 4096}, {16, 4096, 4096}, {1, 512, 16384}, {16, 512, 16384}};
  std::uint32_t seed = 700;
  for (const auto& s : shapes) {
    CAPTURE(s.m);
    CAPTURE(s.n);
    CAPTURE(s.k);
    Problem p(s.m, s.n, s.k, s.k, s.n, ++seed);
    p.run_reference();
    DeviceBuffer flags(b, 3 * sizeof(std::uint32_t));  // release, released, started
    b.fill_bytes(flags.get(), 0, 3 * sizeof(std::uint32_t));
    b.synchronize();
    const OwnedStream holder_stream, work_stream;
    const std::uint64_t timeout_ns = 5'000'000'000;
    KernelLaunch(b, hold)
        .grid({sms - 2, 1, 1})
        .block({32, 1, 1})
        .shared_bytes(holder_smem)
        .arg_ptr(flags.get())
        .arg_ptr(flags.get() + 4)
        .arg_ptr(flags.get() + 8)
        .arg_bytes(&timeout_ns, sizeof(timeout_ns))
        .launch(holder_stream.handle());
    // Every holder CTA resident before stream-K starts.
    std::uint32_t started = 0;
    for (int i = 0; i < 2000 && started < sms - 2; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      METRALE_CU(cuMemcpyDtoH, &started, flags.get().address + 8, sizeof(started));
    }
    REQUIRE(started == sms - 2);
    const auto t0 = std::chrono::steady_clock::now();
    w8a16_gemm_m16_streamk(b, streamk, p.input.get(),
                           p.weight.get(), p.scale.get(), p.out.get(), s.m, s.n, s.k, s.k, s.n,
                           gpu().streamk_workspace(), 2 * sms, work_stream.handle());
    KernelLaunch(b, set_flag).grid({1, 1, 1}).block({1, 1, 1}).arg_ptr(flags.get())
        .launch(work_stream.handle());
    work_stream.synchronize();
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    holder_stream.synchronize();
    std::uint32_t released = 0;
    METRALE_CU(cuMemcpyDtoH, &released, flags.get().address + 4, sizeof(released));
    MESSAGE("stream-K on ", 2 * sms, " CTAs with 2 SMs free: ", ms, " ms; ", released, " of ",
            sms - 2, " holder CTAs released before their timeout");
    CHECK(released == sms - 2);
    const OutputCheck c = check_output(p, p.download_out(), p.download_ref());
    CHECK(c.budget.failures == 0);
    CHECK(c.written_outside == 0);
  }
}
