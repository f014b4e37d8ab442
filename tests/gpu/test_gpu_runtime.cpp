// The kernel service on a real device: every module compiles and loads for the device's
// own target, entries have registers and no local memory, and the backend refuses
// handles from another context and reports failed launches with the driver's error; a
// call into it gives the thread back the context it had current.
#include <dlfcn.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "driver_api.hpp"
#include "gpu/gpu_fixture.hpp"
#include "metrale/compile_target.hpp"
#include "metrale/disk_cache.hpp"
#include "metrale/error.hpp"
#include "metrale/fill_random.hpp"
#include "metrale/kernel_launch.hpp"
#include "metrale/kernel_resources.hpp"
#include "metrale/kernel_variants.hpp"
#include "support/kernel_limits.hpp"

using namespace metrale;
using namespace metrale::test;

TEST_CASE("gpu: every variant loads for the device target with its tile constants checked") {
  GpuContext& g = gpu();
  MESSAGE("device: ", g.backend.info().name, " ", g.backend.target(), ", ",
          g.backend.info().sm_count, " SMs");
  CHECK(g.backend.info().cc_major >= 8);
  for (const KernelVariant& v : kernel_variants()) {
    for (const std::string& e : v.entries) {
      const KernelHandle h = g.cache.kernel(v, e);
      CHECK((h.function_above8 != nullptr) == v.token_split);
      for (const auto& [label, handle] : {std::pair{v.token_split ? e + " m<=8" : e, h},
                                          std::pair{e + " m>8", above8_build(h)}}) {
        if (handle.function == nullptr) continue;
        const KernelAttributes a = g.backend.attributes(handle);
        MESSAGE(fmt::format("{:<32} registers {:>3}  local {:>3} B  static smem {:>6} B", label,
                            a.registers, a.local_bytes, a.static_shared_bytes));
        check_kernel_limits(e, handle.function != h.function, a.registers, a.local_bytes);
      }
    }
  }
}

TEST_CASE("gpu: ptxas's report of each entry is what the driver reports of the loaded module") {
  // What `metrale compile --resources` and the host tests read without a GPU.
  GpuContext& g = gpu();
  const CompileTarget target = choose_compile_target(g.backend.target());
  if (target.ptx_fallback) {
    MESSAGE("the modules are JIT-compiled from PTX here: nothing of ptxas's to compare");
    return;
  }
  int compared = 0;
  for (const KernelVariant& v : kernel_variants()) {
    const std::span<const KernelVariant> builds = shipped_module_builds(v);
    std::vector<std::vector<KernelResources>> reports;
    for (const KernelVariant& b : builds) reports.push_back(kernel_resources(b, target.target));
    for (const std::string& e : v.entries) {
      const KernelHandle h = g.cache.kernel(v, e);
      const std::string symbol(kernel_symbol_of(v, e));
      for (std::size_t i = 0; i < builds.size(); ++i) {
        CAPTURE(builds[i].name);
        CAPTURE(e);
        const KernelHandle handle = i == 0 ? h : above8_build(h);
        REQUIRE(handle.function != nullptr);
        const auto k = std::find_if(reports[i].begin(), reports[i].end(),
                                    [&](const KernelResources& r) { return r.symbol == symbol; });
        REQUIRE(k != reports[i].end());
        const KernelAttributes a = g.backend.attributes(handle);
        CHECK(k->registers == a.registers);
        CHECK(k->stack_frame_bytes == a.local_bytes);
        CHECK(k->shared_bytes == a.static_shared_bytes);
        ++compared;
      }
    }
  }
  MESSAGE(compared, " entry builds: ptxas's registers, stack and static shared memory are the "
                    "driver's");
}

TEST_CASE("gpu: a handle from another context is refused, nothing launched") {
  GpuContext& g = gpu();
  KernelHandle h = g.cache.kernel("fill_u16");
  h.context = g.backend.context() + 64;
  CHECK_THROWS_WITH_AS(KernelLaunch(g.backend, h).grid({1, 1, 1}).block({1, 1, 1}).launch(0),
                       doctest::Contains("belongs to another CUDA context"), Error);
}

TEST_CASE("gpu: a launch the driver refuses names the call and the driver error") {
  GpuContext& g = gpu();
  DeviceBuffer buf(g.backend, 64);
  CHECK_THROWS_WITH_AS(KernelLaunch(g.backend, g.cache.kernel("fill_u16"))
                           .grid({1, 1, 1})
                           .block({4096, 1, 1})
                           .arg_ptr(buf.get())
                           .arg_u32(32)
                           .arg_u32(0)
                           .launch(0),
                       doctest::Contains("cuLaunchKernel of fill_u16"), Error);
  g.backend.synchronize();
}

TEST_CASE("gpu: a call into the library gives the thread back the context it had current") {
  // An engine's own context on this device (not the primary one the library uses), made
  // through the driver directly: the library's table holds only what it calls.
  void* driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(driver != nullptr);
  using Create = CUresult (*)(CUcontext*, CUctxCreateParams*, unsigned, CUdevice);
  using Destroy = CUresult (*)(CUcontext);
  const auto create = reinterpret_cast<Create>(::dlsym(driver, "cuCtxCreate_v4"));
  const auto destroy = reinterpret_cast<Destroy>(::dlsym(driver, "cuCtxDestroy_v2"));
  REQUIRE((create != nullptr && destroy != nullptr));
  CUcontext own = nullptr;
  REQUIRE(create(&own, nullptr, 0, 0) == CUDA_SUCCESS);  // current on this thread now
  const auto current = [] {
    CUcontext c = nullptr;
    REQUIRE(driver::api().cuCtxGetCurrent(&c) == CUDA_SUCCESS);
    return c;
  };
  REQUIRE(current() == own);
  {
    // A first use (compile, load, checked constants), memory, a launch, a wait.
    ModuleCache fresh(gpu().backend, nvrtc_compile, DiskCacheConfig::disabled());
    const KernelHandle fill = fresh.kernel("fill_u16");
    CHECK(current() == own);
    DeviceBuffer buf(gpu().backend, 64);
    CHECK(current() == own);
    fill_u16_launch(gpu().backend, fill, buf.get(), 32).launch(0);
    gpu().backend.synchronize();
    CHECK(current() == own);
  }
  CHECK(current() == own);
  CHECK(destroy(own) == CUDA_SUCCESS);
  gpu().backend.make_current();
}

TEST_CASE("gpu: a fill of nearly 2^32 elements ends and writes its last element") {
  // The grid-stride loop's 32-bit index wrapped past such a count and never ended.
  constexpr std::uint32_t kCount = 0xFFFFFFFFu;
  DeviceBuffer codes(gpu().backend, std::size_t{kCount} + 1);
  gpu().backend.fill_bytes(codes.get(), 0xFF, codes.size());  // a NaN code: never filled in
  fill_random_fp8(gpu().cache, codes.get(), kCount, 7, 0x7E, 0);
  gpu().backend.synchronize();
  std::array<std::uint8_t, 2> tail{};
  gpu().backend.download(tail.data(), codes.get() + (std::uint64_t{kCount} - 1), tail.size());
  CHECK((tail[0] & 0x7F) != 0x7F);  // element count - 1, filled
  CHECK(tail[1] == 0xFF);           // element count, past the fill
}
