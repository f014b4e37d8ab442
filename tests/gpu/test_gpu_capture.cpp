// CUDA graphs: after warm-up every launcher can be captured and replays to the results of
// direct launches; a first use inside a capture is a clear error naming warm_up; a module
// loaded beside another thread's capture leaves that capture valid.
#include <doctest/doctest.h>

#include <future>
#include <string>
#include <thread>
#include <vector>

#include "driver_api.hpp"
#include "gpu/gpu_fixture.hpp"
#include "gpu/owned_stream.hpp"
#include "metrale/dense_ffn.hpp"
#include "metrale/disk_cache.hpp"
#include "metrale/error.hpp"
#include "metrale/kernel_variants.hpp"
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

// What another thread's capture of a blocking stream (one that synchronizes with the
// legacy stream) reports after `calls` ran on this thread while it was open.
struct CaptureOutcome {
  CUresult begin = CUDA_ERROR_UNKNOWN;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  CUresult end = CUDA_ERROR_UNKNOWN;
};

template <typename Calls>
CaptureOutcome beside_capture(CUstreamCaptureMode mode, Calls calls) {
  CaptureOutcome out;
  std::promise<void> begun;
  std::promise<void> done;
  std::thread capturer([&] {
    const driver::Api& api = driver::api();
    CUstream stream = nullptr;
    try {
      gpu().backend.make_current();
      METRALE_CU(cuStreamCreate, &stream, CU_STREAM_DEFAULT);
      out.begin = api.cuStreamBeginCapture(stream, mode);
    } catch (const Error&) {
      // out.begin stays an error; the main thread's checks report it.
    }
    begun.set_value();
    done.get_future().wait();
    if (stream == nullptr) return;
    api.cuStreamIsCapturing(stream, &out.status);
    CUgraph graph = nullptr;
    out.end = api.cuStreamEndCapture(stream, &graph);
    if (graph != nullptr) api.cuGraphDestroy(graph);
    api.cuStreamDestroy(stream);
  });
  begun.get_future().wait();
  try {
    calls();
  } catch (...) {
    done.set_value();
    capturer.join();
    throw;
  }
  done.set_value();
  capturer.join();
  return out;
}

void check_capture_valid(const CaptureOutcome& c) {
  CHECK(c.begin == CUDA_SUCCESS);
  CHECK(c.status == CU_STREAM_CAPTURE_STATUS_ACTIVE);
  CHECK(c.end == CUDA_SUCCESS);
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

TEST_CASE("gpu: a module loaded beside another thread's capture leaves that capture valid") {
  // The legacy stream may not be used while another thread captures a blocking stream, in
  // any capture mode; a module's first use runs beside such captures when a serving
  // thread captures while another warms up.
  const KernelVariant build = module_builds(variant_named("w8a16_gemm_m16")).at(0);
  REQUIRE(!build.checks.empty());
  const GlobalCheck& check = build.checks[0];
  const CompiledModule compiled =
      nvrtc_compile(compile_request(build, gpu().cache.compile_target()));
  const auto module = gpu().backend.load_module(compiled.image, build.name);
  for (const CUstreamCaptureMode mode :
       {CU_STREAM_CAPTURE_MODE_RELAXED, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL}) {
    CAPTURE(static_cast<int>(mode));
    std::uint32_t value = 0;
    check_capture_valid(
        beside_capture(mode, [&] { value = module->read_global_u32(check.name); }));
    CHECK(value == check.expected);
    // A whole first use: compile, load, the checks' reads and the entries' functions.
    ModuleCache cold(gpu().backend, nvrtc_compile, DiskCacheConfig::disabled());
    check_capture_valid(beside_capture(
        mode, [&] { CHECK(cold.kernel("w8a16_gemm_m16").function != nullptr); }));
  }
}
