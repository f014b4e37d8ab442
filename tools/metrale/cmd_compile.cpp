// `metrale compile`: fills a kernel cache directory ahead of time for a list of targets,
// on a machine with or without a GPU, and dumps PTX or CUBIN of any variant for
// inspection. Entries are exactly those a process on that GPU would write, so a warm
// directory can ship in a container image (METRALE_KERNEL_CACHE_PATH).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <thread>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "file_io.hpp"
#include "metrale/args.hpp"
#include "metrale/cache_fill.hpp"
#include "metrale/commands.hpp"
#include "metrale/compile_target.hpp"
#include "metrale/disk_cache.hpp"
#include "metrale/error.hpp"
#include "metrale/kernel_resources.hpp"
#include "metrale/kernel_variants.hpp"
#include "metrale/nvrtc_compiler.hpp"
#include "metrale/resources_table.hpp"

namespace metrale::cli {
namespace {

constexpr const char* kHelp =
    "usage: metrale compile --target sm_XY [--target sm_XY ...] [--out DIR] [--jobs N]\n"
    "                       [--variant NAME ...] [--dump-ptx DIR] [--dump-cubin DIR]\n"
    "                       [--define NAME=VALUE ...] [--resources]\n\n"
    "Compiles kernel variants with NVRTC for each target (no GPU needed, in parallel) and\n"
    "writes them as cache entries, the same a process on that GPU would write, so that it\n"
    "starts without compiling. A target newer than this NVRTC gets PTX of the newest\n"
    "virtual target, as at run time. Entries already valid in DIR are kept.\n\n"
    "  --target sm_XY     target to compile for (repeatable, or comma-separated)\n"
    "  --out DIR          cache directory to fill (default: METRALE_KERNEL_CACHE_DIR, else\n"
    "                     $XDG_CACHE_HOME/metrale/kernels, else ~/.cache/metrale/kernels;\n"
    "                     with only --dump-* options nothing is cached)\n"
    "  --jobs N           parallel compiles (default: the number of CPUs)\n"
    "  --variant NAME     only this variant's modules (repeatable; an entry name stands for\n"
    "                     its variant; default: every variant; a w8a16_gemm_m16* variant\n"
    "                     is two modules, NAME.m8 and NAME.m16, but for the 32-row deep\n"
    "                     kernel, w8a16_gemm_m16_skinny_deep32, one for every m)\n"
    "  --dump-ptx DIR     also write DIR/<module>.compute_XY.ptx\n"
    "  --dump-cubin DIR   also write DIR/<module>.sm_XY.cubin\n"
    "  --define N=V       compile with this extra define (repeatable), after the module's\n"
    "                     own: a kernel's tuning point, to read its PTX, registers or SASS\n"
    "                     (as `metrale bench --define` times it); only with --dump-*,\n"
    "                     --resources and without --out, since a cache holds the\n"
    "                     library's own builds\n"
    "  --resources        also print each kernel's registers, stack frame, spills,\n"
    "                     barriers and static shared memory as ptxas reports them (what\n"
    "                     the driver reports of the loaded CUBIN; sm_XY targets only);\n"
    "                     alone, nothing is cached\n";

struct Job {
  const KernelVariant* variant = nullptr;
  std::string target;  // the compile target: sm_XY or compute_XY
  bool to_cache = false;
  bool dump_ptx = false;
  bool dump_cubin = false;
  bool resources = false;
  // Results.
  std::string status;
  double ms = 0.0;
  std::size_t bytes = 0;
  std::string error;
  std::vector<KernelResources> kernels;  // with `resources`
};

std::vector<std::string> split_targets(const std::vector<std::string>& values) {
  std::vector<std::string> out;
  for (const std::string& v : values) {
    std::size_t start = 0;
    while (start <= v.size()) {
      const std::size_t end = std::min(v.find(',', start), v.size());
      // An empty item is a typo, refused as --m's lists refuse one.
      ensure(end > start, "--target: '{}' has an empty item", v);
      std::string t = normalize_target(v.substr(start, end - start));
      if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(std::move(t));
      start = end + 1;
    }
  }
  return out;
}

void write_dump(const std::filesystem::path& dir, const std::string& name,
                std::span<const char> image, bool is_ptx) {
  // PTX comes NUL-terminated for the driver; a text file has no use for the NUL.
  while (is_ptx && !image.empty() && image.back() == '\0') image = image.first(image.size() - 1);
  write_file_atomically(dir, name, image);
}

void run_job(Job& job, DiskCache* cache, const std::optional<std::filesystem::path>& ptx_dir,
             const std::optional<std::filesystem::path>& cubin_dir) {
  const auto start = std::chrono::steady_clock::now();
  const KernelVariant& v = *job.variant;
  std::vector<char> image;
  if (job.to_cache) {
    CacheFill fill = compile_through_cache(*cache, v, job.target, job.resources);
    ensure(fill.from_cache || fill.stored,
           "could not write the cache entry for {} ({}) into {}", v.name, job.target,
           cache->config().directory.string());
    image = std::move(fill.image);
    job.status = fill.from_cache ? "cached" : "compiled";
    // A cached image carries no report: only that case compiles again.
    if (job.resources) {
      job.kernels = fill.from_cache ? kernel_resources(v, job.target)
                                    : parse_ptxas_report(fill.ptxas_report);
    }
  } else {
    CompiledModule module = nvrtc_compile(compile_request(v, job.target, job.resources));
    if (job.resources) job.kernels = parse_ptxas_report(module.ptxas_report);
    image = std::move(module.image);
    job.status = "compiled";
  }
  if (job.dump_ptx) write_dump(*ptx_dir, v.name + "." + job.target + ".ptx", image, true);
  if (job.dump_cubin) write_dump(*cubin_dir, v.name + "." + job.target + ".cubin", image, false);
  job.bytes = image.size();
  job.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
               .count();
}

std::optional<std::filesystem::path> output_dir(const Args& args, const std::string& name) {
  const std::optional<std::string> value = args.value(name);
  if (!value) return std::nullopt;
  std::error_code ec;
  std::filesystem::create_directories(*value, ec);
  ensure(!ec, "--{}: cannot create {}: {}", name, *value, ec.message());
  return std::filesystem::path(*value);
}

}  // namespace

int cmd_compile(int argc, char** argv) {
  Args args(argc, argv, 1, {"help", "resources"},
            {"target", "out", "jobs", "variant", "dump-ptx", "dump-cubin", "define"});
  if (args.has("help")) {
    fmt::print("{}", kHelp);
    return 0;
  }
  args.refuse_positional("compile");
  // Every check up to the output directories judges the command line: a usage error.
  const std::vector<std::string> targets =
      as_usage([&] { return split_targets(args.values("target")); });
  usage_ensure(!targets.empty(), "compile: give at least one --target (e.g. --target sm_90)");
  // The modules to compile: every build of each named variant (kernel_variants.hpp).
  std::vector<KernelVariant> builds =
      as_usage([&] { return module_builds_named(args.values("variant")); });
  const std::vector<Define> defines = parse_defines(args);
  const bool resources = args.has("resources");
  usage_ensure(
      defines.empty() ||
          ((args.has("dump-ptx") || args.has("dump-cubin") || resources) && !args.has("out")),
      "compile: --define only with --dump-ptx, --dump-cubin or --resources and without "
      "--out (a cache holds the library's own builds)");
  for (KernelVariant& b : builds) b.defines.insert(b.defines.end(), defines.begin(), defines.end());
  std::vector<const KernelVariant*> variants;
  for (const KernelVariant& b : builds) variants.push_back(&b);
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  if (auto j = args.value("jobs")) {
    const std::vector<std::uint32_t> parsed = parse_u32_list(*j, "--jobs");
    usage_ensure(parsed.size() == 1 && parsed[0] >= 1,
                 "--jobs must be one number of at least 1, not {}", *j);
    jobs = parsed[0];
  }
  // Every target is judged before a directory is created: an error leaves nothing behind.
  std::vector<std::pair<std::string, CompileTarget>> chosen_targets;
  for (const std::string& target : targets) {
    chosen_targets.emplace_back(target, as_usage([&] { return choose_compile_target(target); }));
  }
  const bool to_cache =
      args.has("out") || (!args.has("dump-ptx") && !args.has("dump-cubin") && !resources);
  const bool any_cubin = std::any_of(chosen_targets.begin(), chosen_targets.end(),
                                     [](const auto& t) { return !t.second.ptx_fallback; });
  usage_ensure(to_cache || args.has("dump-ptx") || any_cubin,
               "compile: nothing to compile: --resources and --dump-cubin need a target this "
               "NVRTC emits CUBIN for");
  const auto ptx_dir = output_dir(args, "dump-ptx");
  const auto cubin_dir = output_dir(args, "dump-cubin");
  std::unique_ptr<DiskCache> cache;
  if (to_cache) {
    const std::filesystem::path out = args.has("out") ? std::filesystem::path(*args.value("out"))
                                                      : default_cache_directory();
    ensure(!out.empty(), "compile: no --out given and no cache location in the environment");
    cache = std::make_unique<DiskCache>(DiskCacheConfig::at(out));
    ensure(cache->writable(), "compile: cache directory {} is not writable", out.string());
  }

  // One job per (variant, compile target): a PTX fallback target and --dump-ptx of it
  // share one compile.
  std::map<std::tuple<std::string, std::string>, Job> by_key;
  auto job_for = [&](const KernelVariant* v, const std::string& target) -> Job& {
    Job& job = by_key[{v->name, target}];
    job.variant = v;
    job.target = target;
    return job;
  };
  for (const auto& [target, chosen] : chosen_targets) {
    for (const KernelVariant* v : variants) {
      if (cache) job_for(v, chosen.target).to_cache = true;
      if (cubin_dir && !chosen.ptx_fallback) job_for(v, chosen.target).dump_cubin = true;
      if (resources && !chosen.ptx_fallback) job_for(v, chosen.target).resources = true;
      if (ptx_dir) job_for(v, virtual_target(chosen.target)).dump_ptx = true;
    }
    if ((cubin_dir || resources) && chosen.ptx_fallback) {
      fmt::print(stderr, "metrale compile: no CUBIN for {}: this NVRTC emits {} PTX only\n",
                 target, chosen.target);
    }
  }
  std::vector<Job*> list;
  for (auto& [key, job] : by_key) list.push_back(&job);

  const auto start = std::chrono::steady_clock::now();
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> workers;
  for (unsigned w = 0; w < std::min<std::size_t>(jobs, list.size()); ++w) {
    workers.emplace_back([&] {
      for (std::size_t i = next++; i < list.size(); i = next++) {
        try {
          run_job(*list[i], cache.get(), ptx_dir, cubin_dir);
        } catch (const std::exception& e) {
          list[i]->status = "FAILED";
          list[i]->error = e.what();
        }
      }
    });
  }
  for (std::thread& t : workers) t.join();
  const double wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  fmt::print("{:<32} {:<12} {:<9} {:>10} {:>10}\n", "module", "target", "status", "ms", "bytes");
  int failed = 0;
  int compiled = 0;
  for (const Job* job : list) {
    fmt::print("{:<32} {:<12} {:<9} {:>10.1f} {:>10}\n", job->variant->name, job->target,
               job->status, job->ms, job->bytes);
    failed += job->error.empty() ? 0 : 1;
    compiled += job->status == "compiled" ? 1 : 0;
  }
  if (resources) {
    std::vector<ModuleResources> modules;
    for (const Job* job : list) {
      if (job->resources) modules.push_back({job->variant->name, job->target, job->kernels});
    }
    fmt::print("\n");
    print_resources_table(modules);
  }
  for (const Job* job : list) {
    if (!job->error.empty()) {
      fmt::print(stderr, "metrale compile: {} for {}: {}\n", job->variant->name, job->target,
                 job->error);
    }
  }
  fmt::print("{} module(s) in {:.0f} ms with {} job(s): {} compiled, {} already cached, {} "
             "failed{}\n",
             list.size(), wall_ms, jobs, compiled,
             list.size() - static_cast<std::size_t>(compiled + failed), failed,
             cache ? " -> " + cache->config().directory.string() : std::string());
  return failed == 0 ? 0 : 1;
}

}  // namespace metrale::cli
