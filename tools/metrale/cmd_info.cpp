// `metrale info`: the main job. Reports the device (or why there is none), compiles every
// kernel variant for it (or for --target, sm_90 by default without a device), prints
// compile times and CUBIN sizes, and, with a device, loads each module and prints each
// entry's registers, local memory and static shared memory (without one, what ptxas
// reports of each kernel). With a device it then runs the microtest.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "metrale/args.hpp"
#include "metrale/commands.hpp"
#include "metrale/cuda_backend.hpp"
#include "metrale/embedded_sources.hpp"
#include "metrale/error.hpp"
#include "metrale/kernel_resources.hpp"
#include "metrale/kernel_service.hpp"
#include "metrale/kernel_variants.hpp"
#include "metrale/module_cache.hpp"
#include "metrale/nvrtc_compiler.hpp"
#include "metrale/resources_table.hpp"

namespace metrale::cli {

namespace {

constexpr const char* kHelp =
    "usage: metrale [info] [--device N] [--target sm_XY] [--no-microtest]\n\n"
    "Reports the CUDA device (or why none is usable), compiles every kernel variant with\n"
    "NVRTC for it, and prints compile time, CUBIN size and, on a device, each entry's\n"
    "registers, local memory and shared memory. Without a device it compiles for --target\n"
    "(default sm_90) and prints each kernel's registers, stack, spills and shared memory as\n"
    "ptxas reports them. With a device it then runs the microtest (see `metrale\n"
    "microtest`).\n\n"
    "  --device N      CUDA device ordinal (default 0)\n"
    "  --target sm_XY  compile for this target instead of the device's (one this NVRTC\n"
    "                  compiles SASS for)\n"
    "  --no-microtest  skip the microtest\n";

}  // namespace

int cmd_info(int argc, char** argv) {
  Args args(argc, argv, 1, {"help", "no-microtest"}, {"device", "target"});
  if (args.has("help")) {
    fmt::print("{}", kHelp);
    return 0;
  }
  args.refuse_positional("info");
  // Every argument is checked before the driver is touched, so that a mistyped one is
  // refused at once, on any machine, rather than after a compile of every kernel.
  const int ordinal = parse_device(args);
  const std::optional<std::string> target_option =
      args.has("target")
          ? std::optional(as_usage([&] { return normalize_target(*args.value("target")); }))
          : std::nullopt;
  if (target_option) {
    const std::vector<std::string> supported = nvrtc_supported_targets();
    usage_ensure(
        std::find(supported.begin(), supported.end(), *target_option) != supported.end(),
        "--target {}: this NVRTC does not compile for it (it does for {}); `metrale "
        "compile --target` builds PTX for newer GPUs",
        *target_option, fmt::join(supported, ", "));
  }
  fmt::print("metrale kernels: NVRTC {}, {} embedded source(s)\n", nvrtc_version(),
             embedded_sources().size());

  std::unique_ptr<KernelService> service;
  CudaBackend* gpu = nullptr;
  const std::string reason = cuda_unavailable_reason();
  if (reason.empty()) {
    service = std::make_unique<KernelService>(ordinal);
    gpu = &service->backend();
    const DeviceInfo& d = gpu->info();
    fmt::print("device {}: {}, compute capability {}.{} ({}), {} SMs, {:.1f} GiB, L2 {} MiB, "
               "DRAM {} GB/s peak\n",
               d.ordinal, d.name, d.cc_major, d.cc_minor, d.target(), d.sm_count,
               static_cast<double>(d.total_memory) / (1 << 30), d.l2_bytes >> 20, d.dram_gbps);
  } else {
    fmt::print("device: none ({})\n", reason);
  }
  const std::string target = target_option.value_or(gpu ? gpu->target() : "sm_90");
  fmt::print("target: {}\n\n", target);

  fmt::print("{:<32} {:>12} {:>12} {:>8}\n", "module", "compile ms", "cubin bytes", "log");
  // With the device's own target the driver reports each entry once loaded; otherwise
  // ptxas's report of the same compile stands in for it.
  const bool loaded = gpu != nullptr && target == gpu->target();
  std::vector<ModuleResources> resources;
  for (const KernelVariant& v : all_module_builds()) {
    CompiledModule c = nvrtc_compile(compile_request(v, target, !loaded));
    fmt::print("{:<32} {:>12.1f} {:>12} {:>8}\n", v.name, c.compile_ms, c.image.size(),
               c.log.empty() ? "clean" : "WARN");
    if (!c.log.empty()) fmt::print("{}\n", c.log);
    if (!loaded) resources.push_back({v.name, target, parse_ptxas_report(c.ptxas_report)});
  }

  if (!loaded) {
    fmt::print("\n");
    print_resources_table(resources);
  } else {
    ModuleCache& cache = service->cache();
    fmt::print("\n{:<30} {:>10} {:>12} {:>14}\n", "entry", "registers", "local bytes",
               "static smem");
    for (const KernelVariant& v : kernel_variants()) {
      for (const std::string& e : v.entries) {
        const KernelHandle h = cache.kernel(v, e);
        for (const auto& [label, handle] : {std::pair{v.token_split ? e + " (m<=8)" : e, h},
                                            std::pair{e + " (m>8)", above8_build(h)}}) {
          if (handle.function == nullptr) continue;
          const KernelAttributes a = gpu->attributes(handle);
          fmt::print("{:<30} {:>10} {:>12} {:>14}\n", label, a.registers, a.local_bytes,
                     a.static_shared_bytes);
        }
      }
    }
  }
  if (service && !args.has("no-microtest")) {
    fmt::print("\n");
    return run_microtest(*service, {1, 8, 16}, 1);
  }
  return 0;
}

}  // namespace metrale::cli
