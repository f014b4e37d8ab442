#include "metrale/bench/host_costs.hpp"

#include <algorithm>
#include <chrono>
#include <functional>

#include "metrale/bench/bench_module.hpp"
#include "metrale/error.hpp"
#include "metrale/kernel_variants.hpp"
#include "metrale/nvrtc_compiler.hpp"
#include "metrale/w8a16_gemm_m16.hpp"
#include "metrale/w8a16_gemm_m16_auto.hpp"
#include "metrale/w8a16_gemm_m16_streamk.hpp"

namespace metrale::bench {
namespace {

// A backend that accepts launches and does nothing: what is left of a launcher call is
// the library's own part (guards and argument packing), without the driver.
class NullBackend final : public GpuBackend {
 public:
  explicit NullBackend(ContextId context) : context_(context) {}
  ContextId context() const override { return context_; }
  std::string target() const override { return "null"; }
  std::unique_ptr<LoadedModule> load_module(std::span<const char>, std::string_view) const override {
    fail("the null backend loads no modules");
  }
  TensorMapBytes tensor_map_2d(const TensorMap2dRequest& request) const override {
    return packed_tensor_map_request(request);
  }
  void launch(const KernelHandle&, const LaunchConfig&, std::span<const KernelArg> args,
              StreamHandle) const override {
    packed_ += args.size();
  }

 private:
  ContextId context_;
  mutable std::uint64_t packed_ = 0;  // keeps the calls from being optimised away
};

template <typename Call>
std::vector<double> per_call_ns(std::uint32_t batches, std::uint32_t batch, Call call,
                                const std::function<void()>& between) {
  std::vector<double> out;
  for (std::uint32_t b = 0; b < batches; ++b) {
    const auto start = std::chrono::steady_clock::now();
    for (std::uint32_t i = 0; i < batch; ++i) call();
    const auto stop = std::chrono::steady_clock::now();
    between();
    out.push_back(std::chrono::duration<double, std::nano>(stop - start).count() / batch);
  }
  return out;
}

}  // namespace

LaunchCost measure_launch_cost(const CudaBackend& gpu, ModuleCache& cache, const Stream& stream,
                               std::uint32_t batches, std::uint32_t batch) {
  // One N tile, one K block, one row, and batches of 100 calls followed by a
  // synchronisation: the launch queue never fills, so a call never waits for the GPU
  // and only the host side is measured.
  constexpr std::uint32_t kN = 128;
  constexpr std::uint32_t kK = 128;
  DeviceBuffer x(gpu, kK * 2);
  DeviceBuffer w(gpu, kN * kK);
  DeviceBuffer s(gpu, sizeof(float));
  DeviceBuffer out(gpu, kN * 2);
  gpu.fill_bytes(x.get(), 0, kK * 2);
  gpu.fill_bytes(w.get(), 0, kN * kK);
  gpu.fill_bytes(s.get(), 0, sizeof(float));
  gpu.synchronize();  // the memsets are on the legacy stream; `stream` does not wait for it
  const KernelHandle kernel = cache.kernel("w8a16_gemm_m16");
  const auto launch = [&] {
    w8a16_gemm_m16(gpu, kernel, x.get(), w.get(), s.get(), out.get(), 1, kN, kK, stream.handle());
  };
  const auto drain = [&] { stream.synchronize(); };
  per_call_ns(1, batch, launch, drain);  // warm-up: first-launch costs of function and stream
  const std::vector<double> per_call = per_call_ns(batches, batch, launch, drain);

  const NullBackend null_gpu(kernel.context);
  const std::vector<double> library = per_call_ns(
      batches, batch,
      [&] {
        w8a16_gemm_m16(null_gpu, kernel, x.get(), w.get(), s.get(), out.get(), 1, kN, kK,
                       stream.handle());
      },
      [] {});
  // The driver's floor: the same parameter block, an empty kernel, no library code.
  BenchModule empty_module(gpu, "empty_launch.cu");
  const KernelHandle empty = empty_module.kernel("empty_launch");
  const DevicePtr ptrs[] = {x.get(), w.get(), s.get(), out.get()};
  const std::uint32_t dims[] = {1, kN, kK};
  std::vector<KernelArg> empty_args;
  for (const DevicePtr& p : ptrs) empty_args.push_back({&p.address, sizeof(p.address)});
  for (const std::uint32_t& d : dims) empty_args.push_back({&d, sizeof(d)});
  LaunchConfig empty_config;
  empty_config.grid = {1, 1, 1};
  empty_config.block = {32, 1, 1};
  const auto empty_launch = [&] { gpu.launch(empty, empty_config, empty_args, stream.handle()); };
  per_call_ns(1, batch, empty_launch, drain);
  const std::vector<double> driver = per_call_ns(batches, batch, empty_launch, drain);
  // The same launches, each batch behind a kernel that keeps the GPU busy for 2 ms (a
  // batch takes well under 1 ms): no call finds the GPU idle.
  const KernelHandle busy = empty_module.kernel("busy_wait");
  const std::uint64_t busy_ns = 2'000'000;
  const KernelArg busy_args[] = {{&busy_ns, sizeof(busy_ns)}};
  const auto occupy = [&] { gpu.launch(busy, empty_config, busy_args, stream.handle()); };
  const auto per_call_behind_busy = [&](const auto& call) {
    std::vector<double> per_batch;
    for (std::uint32_t b = 0; b < batches / 10; ++b) {
      occupy();
      per_batch.push_back(per_call_ns(1, batch, call, drain).front());
    }
    return per_batch;
  };
  const std::vector<double> busy_calls = per_call_behind_busy(launch);
  const std::vector<double> busy_driver = per_call_behind_busy(empty_launch);
  const KernelHandle bare = empty_module.kernel("empty_launch_no_args");
  const auto bare_launch = [&] { gpu.launch(bare, empty_config, {}, stream.handle()); };
  per_call_ns(1, batch, bare_launch, drain);
  const std::vector<double> driver_no_args = per_call_ns(batches, batch, bare_launch, drain);

  // Stream-K on the same one-tile problem, one CTA, its own zeroed workspace (a tile run
  // by one CTA alone never touches it).
  const std::uint64_t ws_bytes = w8a16_gemm_m16_streamk_workspace_bytes(kN, 1);
  DeviceBuffer ws(gpu, ws_bytes);
  gpu.fill_bytes(ws.get(), 0, ws_bytes);
  gpu.synchronize();
  const KernelHandle streamk = cache.kernel("w8a16_gemm_m16_streamk");
  const auto streamk_call = [&](const GpuBackend& backend) {
    w8a16_gemm_m16_streamk(backend, streamk, x.get(), w.get(), s.get(), out.get(), 1, kN, kK, kK,
                           kN, {ws.get(), ws_bytes}, 1, stream.handle());
  };
  per_call_ns(1, batch, [&] { streamk_call(gpu); }, drain);
  const std::vector<double> streamk_calls =
      per_call_ns(batches, batch, [&] { streamk_call(gpu); }, drain);
  const std::vector<double> streamk_library =
      per_call_ns(batches, batch, [&] { streamk_call(null_gpu); }, [] {});
  // The automatic call on the same problem: its plan, its kernel lookup, then the
  // launcher of the entry it picks.
  const M16PlanDevice device = plan_device(gpu.info());
  const std::uint64_t auto_ws_bytes =
      std::max<std::uint64_t>(16, w8a16_gemm_m16_auto_workspace_bytes(1, kN, kK, device));
  DeviceBuffer auto_ws(gpu, auto_ws_bytes);
  gpu.fill_bytes(auto_ws.get(), 0, auto_ws_bytes);
  gpu.synchronize();
  const KernelLookup lookup = kernel_lookup(cache);
  const auto auto_call = [&](const GpuBackend& backend) {
    w8a16_gemm_m16_auto(backend, lookup, device, x.get(), w.get(), s.get(), out.get(), 1, kN, kK,
                        kK, kN, {auto_ws.get(), auto_ws_bytes}, stream.handle());
  };
  per_call_ns(1, batch, [&] { auto_call(gpu); }, drain);
  const std::vector<double> auto_calls =
      per_call_ns(batches, batch, [&] { auto_call(gpu); }, drain);
  const std::vector<double> auto_library =
      per_call_ns(batches, batch, [&] { auto_call(null_gpu); }, [] {});
  const TensorMap2dRequest map_request{w.get(), 1, kK, kN, kK, 128, 128};
  const std::vector<double> encode =
      per_call_ns(batches, batch, [&] { (void)gpu.tensor_map_2d(map_request); }, [] {});

  LaunchCost c;
  c.entry = "w8a16_gemm_m16";
  c.calls = std::uint64_t{batches} * batch;
  c.batch = batch;
  c.median_ns = median(per_call);
  c.min_ns = *std::min_element(per_call.begin(), per_call.end());
  c.max_ns = *std::max_element(per_call.begin(), per_call.end());
  c.library_median_ns = median(library);
  c.driver_median_ns = median(driver);
  c.driver_no_args_median_ns = median(driver_no_args);
  c.busy_median_ns = median(busy_calls);
  c.busy_driver_median_ns = median(busy_driver);
  c.streamk_median_ns = median(streamk_calls);
  c.streamk_library_median_ns = median(streamk_library);
  c.tensor_map_median_ns = median(encode);
  c.auto_entry = std::string(plan_m16_gemm(1, kN, kK, device).entry);
  c.auto_median_ns = median(auto_calls);
  c.auto_library_median_ns = median(auto_library);
  return c;
}

std::vector<CompileTime> measure_compile_times(const CudaBackend& gpu) {
  std::vector<CompileTime> out;
  for (const KernelVariant& v : all_module_builds()) {
    const CompiledModule c = nvrtc_compile(compile_request(v, gpu.target()));
    out.push_back({v.name, c.compile_ms, c.image.size()});
  }
  return out;
}

}  // namespace metrale::bench
