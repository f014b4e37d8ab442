// CUDA graphs: after warm-up every launcher can be captured and replays to the results of
// direct launches; a first use inside a capture is a clear error naming warm_up.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "driver_api.hpp"
#include "gpu/gpu_fixture.hpp"
#include "gpu/owned_stream.hpp"
#include "metrale/dense_ffn.hpp"
#include "metrale/disk_cache.hpp"
#include "metrale/error.hpp"
#include "metrale/w8a16_gemv_batch16.hpp"

using namespace metrale;
using namespace metrale::test;

namespace {

// Captures what `record` launches on `stream` into a graph, replays it once and waits.
template <typename Record>
void capture_and_replay(const OwnedStream& stream, Record record) {
  METRALE_CU(cuStreamBeginCapture, stream.get(), CU_STREAM_CAPTURE_MODE_GLOBAL);
  record();
  CUgraph graph = nullptr;
  METRALE_CU(cuStreamEndCapture, stream.get(), &graph);
  CUgraphExec exec = nullptr;
  METRALE_CU(cuGraphInstantiateWithFlags, &exec, graph, 0);
  METRALE_CU(cuGraphLaunch, exec, stream.get());
  METRALE_CU(cuStreamSynchronize, stream.get());
  driver::api().cuGraphExecDestroy(exec);
  driver::api().cuGraphDestroy(graph);
}

}  // namespace

TEST_CASE("gpu: after warm-up every launcher replays from a CUDA graph as launched directly") {
  gpu().cache.warm_up();
  const OwnedStream stream;
  const std::uint32_t n = 4096 + 32, k = 4096;
  for (const TcEntry& entry : tc_entries()) {
    CAPTURE(entry.name);
    Problem p(11, n, k, entry.strided ? k + 16 : k, entry.strided ? n + 5 : n, 6100);
    entry.launch(p, 0);
    gpu().backend.synchronize();
    const auto direct = p.download_out();
    p.poison();
    gpu().backend.synchronize();
    capture_and_replay(stream, [&] { entry.launch(p, stream.handle()); });
    CHECK(p.download_out() == direct);
  }
  // The reference, the dense FFN over two row halves and a QKV slot, captured together.
  Problem p(16, n, k, k, n, 6200);
  const M16TcKernel sel = m16_tc_kernel(gpu().cache, std::nullopt);
  const TargetLevers levers = target_levers(gpu().backend.target());
  DeviceBuffer ffn_in(gpu().backend, std::size_t{32} * k * 2);
  DeviceBuffer ffn_out(gpu().backend, std::size_t{32} * n * 2);
  gpu().backend.fill_bytes(ffn_in.get(), 0x3C, ffn_in.size());  // BF16 0x3C3C, about 0.0115
  const auto run_all = [&](StreamHandle s) {
    w8a16_gemv_batch16(gpu().backend, gpu().cache.kernel("w8a16_gemv_batch16"), p.input.get(),
                       p.weight.get(), p.scale.get(), p.ref.get(), p.m, n, k, s);
    dense_ffn_m16_tc(sel, levers, gpu().backend, ffn_in.get(), p.weight.get(), p.scale.get(),
                     ffn_out.get(), 24, n, k, s);
    qkv_projection_m16_tc(levers, gpu().backend, gpu().cache.kernel("w8a16_gemm_m16_strided"),
                          p.input.get(), k, p.weight.get(), p.scale.get(), p.out.get(), n,
                          QkvSlot{32, n - 32}, p.m, k, s);
  };
  const auto snapshot = [&] {
    std::vector<std::uint16_t> ffn(ffn_out.size() / 2);
    gpu().backend.download(ffn.data(), ffn_out.get(), ffn_out.size());
    return std::vector<std::vector<std::uint16_t>>{p.download_ref(), p.download_out(), ffn};
  };
  // Rows the calls do not write keep the same bytes in both runs.
  p.poison();
  gpu().backend.fill_bytes(ffn_out.get(), 0xFF, ffn_out.size());
  run_all(0);
  gpu().backend.synchronize();
  const auto direct = snapshot();
  p.poison();
  gpu().backend.fill_bytes(ffn_out.get(), 0xFF, ffn_out.size());
  gpu().backend.synchronize();
  capture_and_replay(stream, [&] { run_all(stream.handle()); });
  CHECK(snapshot() == direct);
}

TEST_CASE("gpu: a first use inside a capture is an error that names the missing warm-up") {
  // A cache of its own, with nothing loaded and no disk cache to load from.
  ModuleCache cold(gpu().backend, nvrtc_compile, DiskCacheConfig::disabled());
  const OwnedStream stream;
  METRALE_CU(cuStreamBeginCapture, stream.get(), CU_STREAM_CAPTURE_MODE_GLOBAL);
  std::string message;
  try {
    cold.kernel("w8a16_gemm_m16");
  } catch (const Error& e) {
    message = e.what();
  }
  CUgraph graph = nullptr;
  driver::api().cuStreamEndCapture(stream.get(), &graph);  // the capture is invalid now
  if (graph != nullptr) driver::api().cuGraphDestroy(graph);
  CHECK(message.find("first used during CUDA graph capture") != std::string::npos);
  CHECK(message.find("warm_up()") != std::string::npos);
  // Outside the capture the same cache serves the kernel.
  CHECK(cold.kernel("w8a16_gemm_m16").function != nullptr);
}
