#include "metrale/bench/host_costs.hpp"

#include <algorithm>
#include <chrono>

#include "metrale/embedded_sources.hpp"
#include "metrale/kernel_variants.hpp"
#include "metrale/nvrtc_compiler.hpp"
#include "metrale/w8a16_gemm_m16.hpp"

namespace metrale::bench {

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
  auto run_batch = [&] {
    const auto start = std::chrono::steady_clock::now();
    for (std::uint32_t i = 0; i < batch; ++i) {
      w8a16_gemm_m16(gpu, kernel, x.get(), w.get(), s.get(), out.get(), 1, kN, kK,
                     stream.handle());
    }
    const auto stop = std::chrono::steady_clock::now();
    stream.synchronize();
    return std::chrono::duration<double, std::nano>(stop - start).count() / batch;
  };
  run_batch();  // warm-up: first-launch costs of the function and the stream

  std::vector<double> per_call;
  for (std::uint32_t b = 0; b < batches; ++b) per_call.push_back(run_batch());
  LaunchCost c;
  c.entry = "w8a16_gemm_m16";
  c.calls = std::uint64_t{batches} * batch;
  c.batch = batch;
  c.median_ns = median(per_call);
  c.min_ns = *std::min_element(per_call.begin(), per_call.end());
  c.max_ns = *std::max_element(per_call.begin(), per_call.end());
  return c;
}

std::vector<CompileTime> measure_compile_times(const CudaBackend& gpu) {
  std::vector<CompileTime> out;
  for (const KernelVariant& v : kernel_variants()) {
    const CompiledModule c = nvrtc_compile(
        CompileRequest{v.source, embedded_source(v.source), v.defines, {}, gpu.target()});
    out.push_back({v.name, c.compile_ms, c.image.size()});
  }
  return out;
}

}  // namespace metrale::bench
