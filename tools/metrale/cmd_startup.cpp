// `metrale startup`: what an engine's start-up costs. Times the driver and the device's
// primary context (what any CUDA process pays before the library runs), then the
// library's own part: creating the service on that context and warming every kernel
// variant up in parallel. Says how many modules NVRTC compiled and how many came from the
// persistent cache. Run it on an empty cache directory for the cold start, again for the
// warm one.
#include <chrono>
#include <string>

#include <fmt/format.h>

#include "metrale/args.hpp"
#include "metrale/commands.hpp"
#include "metrale/cuda_backend.hpp"
#include "metrale/disk_cache.hpp"
#include "metrale/kernel_service.hpp"

namespace metrale::cli {
namespace {

constexpr const char* kHelp =
    "usage: metrale startup [--device N] [--compile-first]\n\n"
    "Brings up the driver and the device's primary context (as an engine does before it\n"
    "creates the library's service), then creates the kernel service on that context and\n"
    "warms up every kernel variant (parallel compile or load from the persistent cache).\n"
    "Prints the time of each step, the NVRTC compiles and the disk-cache hits. Point\n"
    "METRALE_KERNEL_CACHE_DIR at an empty directory to measure a cold start; run again for\n"
    "a warm one.\n\n"
    "  --device N        CUDA device ordinal (default 0)\n"
    "  --compile-first   before any CUDA context exists, compile every module for the\n"
    "                    device's target into the disk cache (as `metrale compile` does),\n"
    "                    then bring up the context and warm up from that cache; prints\n"
    "                    the compile time apart\n";

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

int cmd_startup(int argc, char** argv) {
  Args args(argc, argv, 1, {"help", "compile-first"}, {"device"});
  if (args.has("help")) {
    fmt::print("{}", kHelp);
    return 0;
  }
  args.refuse_positional("startup");
  const int device = parse_device(args);
  if (args.has("compile-first")) {
    const auto compile_start = std::chrono::steady_clock::now();
    KernelService compiler(KernelService::CompileOnly{cuda_device_target(device)});
    compiler.warm_up();
    fmt::print("compile first, no CUDA context: every module for {} in {:.1f} ms\n",
               compiler.target(), ms_since(compile_start));
  }
  const auto start = std::chrono::steady_clock::now();
  const CudaBackend engine_context(device);  // the engine's side: driver, primary context
  const double context_ms = ms_since(start);
  const auto library = std::chrono::steady_clock::now();
  KernelService service(device);
  const double service_ms = ms_since(library);
  const auto warm = std::chrono::steady_clock::now();
  service.warm_up();
  const double warm_ms = ms_since(warm);
  const ModuleCacheStats s = service.cache().stats();
  const auto dir = default_cache_directory();
  fmt::print(
      "startup on {}: driver and primary context {:.1f} ms (any CUDA process); library: "
      "service {:.1f} ms, warm_up of every variant {:.1f} ms, library total {:.1f} ms; "
      "process total {:.1f} ms\n"
      "modules: {} compiled by NVRTC, {} loaded from the disk cache, {} cache entries "
      "rejected and healed, {} stored (cache directory: {})\n",
      service.target(), context_ms, service_ms, warm_ms, service_ms + warm_ms,
      context_ms + service_ms + warm_ms, s.compiles, s.disk_hits,
      s.disk_rejected, s.disk_stores, dir.empty() ? "none" : dir.string());
  return 0;
}

}  // namespace metrale::cli
