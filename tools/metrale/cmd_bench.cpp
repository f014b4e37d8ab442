// `metrale bench`: the library's entries against the HBM read ceiling and the cuBLAS
// baselines, measured the way an engine runs decode (rotated weight copies in a
// replayed CUDA graph), each result checked against the scalar oracle before it is
// timed. See kHelp for the method and the options.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "driver_api.hpp"
#include "metrale/args.hpp"
#include "metrale/bench/ceiling.hpp"
#include "metrale/bench/entries.hpp"
#include "metrale/bench/graph_timer.hpp"
#include "metrale/bench/host_costs.hpp"
#include "metrale/bench/report.hpp"
#include "metrale/bench/runner.hpp"
#include "metrale/bench/shapes.hpp"
#include "metrale/commands.hpp"
#include "metrale/cuda_backend.hpp"
#include "metrale/error.hpp"
#include "metrale/module_cache.hpp"
#include "metrale/nvrtc_compiler.hpp"

namespace metrale::cli {
namespace {

constexpr const char* kHelp =
    "usage: metrale bench [--shape NxK]... [--m 1,8,16] [--entry NAME,...] [--replays N]\n"
    "                     [--warm-ms MS] [--min-bytes MiB] [--no-baselines] [--no-host-cost]\n"
    "                     [--time-wrong] [--json FILE] [--commit SHA] [--device N]\n"
    "                     [--define NAME=VALUE]...\n"
    "                     [--pattern-ceiling CHUNK,...] [--tma-pattern RxBxS,...]\n"
    "                     [--pattern-ctas N] [--tma-claims F,...] [--timeline FILE]\n\n"
    "Times the library's tensor-core entries per shape x m, the way an engine runs them:\n"
    "R copies of the FP8 weights and block scales (R x bytes >= --min-bytes, so L2 never\n"
    "holds the next launch's weights), one launch per copy captured in a CUDA graph, the\n"
    "graph replayed (the timed replays back to back behind an untimed one, so no replay\n"
    "waits for the host to submit it); time per launch = replay time / R, median of\n"
    "--replays replays with min and max. Before timing, every output is checked against\n"
    "the scalar reference w8a16_gemv_batch16 with within_m16_tc_budget (outputs poisoned\n"
    "with NaN first, between poisoned guards); a failing entry is reported WRONG, not\n"
    "timed, and the command exits 1. After timing, the graph's launches run again, each\n"
    "into outputs of its own, and every one is checked the same way. The baselines'\n"
    "outputs are checked against an FP32 product of their own operands. On each shape\n"
    "the plain entries and the baselines of every m are timed before any +pdl entry (a\n"
    "plain launch timed after PDL ones can read slow); METRALE_LOG_LEVEL=debug logs the\n"
    "order.\n\n"
    "In the same run: the device's read-only streaming ceiling (its own kernel, 1 GiB per\n"
    "launch; and, per shape, the same kernel on the layer's bytes per launch, timed as\n"
    "the entries are), cuBLAS BF16 GEMM on dequantized weights and cuBLASLt FP8 W8A8 with\n"
    "per-tensor scales (same method; FP8 pads m to 16 where cuBLASLt needs it and says\n"
    "[m->16]), the host cost of one launcher call (beside a bare driver launch) and the\n"
    "NVRTC compile time of each variant. Reports us, GB/s of the bytes each kernel\n"
    "streams, % of the ceiling and the speed-up over each baseline, and per shape and m\n"
    "the entry plan_m16_gemm picks, without and with programmatic dependent launch, next\n"
    "to the fastest measured of each kind.\n\n"
    "  --shape NxK      a shape to measure (repeatable); default: the 13 decode shapes of\n"
    "                   Llama-3-8B, Qwen3-32B and DeepSeek-V3 (K a multiple of 128)\n"
    "  --m LIST         token counts, each 1..16 (default 1,8,16)\n"
    "  --entry LIST     entries to time (default: all: {}); also by name only, the\n"
    "                   streaming entries' tuning points (.rR tile rows, .sS stages, .cC\n"
    "                   stream-K CTAs per SM): {}\n"
    "  --replays N      timed replays per measurement (default 7)\n"
    "  --warm-ms MS     replay each entry's and baseline's graph for MS ms of wall time\n"
    "                   before its timed replays (default 0: one warm-up replay, and the\n"
    "                   first graph timed on a shape timed twice, the first discarded)\n"
    "  --min-bytes MiB  weight bytes each graph rotates through (default 768)\n"
    "  --no-baselines   skip cuBLAS and cuBLASLt\n"
    "  --no-host-cost   skip the host-cost measurement (its 10^5 launches swamp a profiler)\n"
    "  --json FILE      also write every number to FILE as JSON\n"
    "  --commit SHA     the commit measured, for the record (default: $METRALE_GIT_COMMIT)\n"
    "  --device N       CUDA device ordinal (default 0)\n"
    "  --define N=V     compile the timed entries with this extra define (repeatable), to\n"
    "                   compare kernel variants (e.g. M16_DEPTH_M8=3) in one run\n"
    "  --time-wrong     time an entry whose check fails too (it stays WRONG and the command\n"
    "                   still exits 1): for diagnostic defines that skip work on purpose\n"
    "  --pattern-ceiling CHUNK,...\n"
    "                   also, per shape, the read ceiling of the streaming kernels' weight\n"
    "                   access pattern (128-row x CHUNK-byte units, tile-major, split evenly\n"
    "                   over a persistent grid) for each CHUNK (bytes: 128, 256 or 512;\n"
    "                   16384: chunk 128's units read from the packed layout, 16 KiB each)\n"
    "  --tma-pattern RxBxS,...\n"
    "                   also, per shape, the read ceiling of a ring of tensor copies with\n"
    "                   nothing consuming it: boxes of R rows x B bytes, tile-major, split\n"
    "                   evenly over a persistent grid, S boxes in flight per CTA (stream-K's\n"
    "                   ring copies 128x128 boxes)\n"
    "  --pattern-ctas N CTAs per SM of both patterns' grids (default 2)\n"
    "  --tma-claims F,...\n"
    "                   the tensor-copy pattern once per F: 0 splits the units by CTA index\n"
    "                   (default), F > 0 into F ranges per CTA that the CTAs claim from a\n"
    "                   counter as they go\n"
    "  --timeline FILE  build the timed entries with METRALE_DIAG_TIMELINE and write\n"
    "                   stream-K's per-CTA timeline of each entry's last launch to FILE,\n"
    "                   one line per CTA (tools/timeline_summary.py reads it)\n";

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32] = {};
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

std::string entry_names(std::span<const bench::BenchEntry> entries) {
  std::string names;
  for (const bench::BenchEntry& e : entries) {
    if (!names.empty()) names += ',';
    names += e.name;
  }
  return names;
}

// A file the run writes at its end (--json, --timeline): not a directory, in a directory
// that exists and this process may write in.
void check_output_file(const char* option, const std::string& path) {
  std::error_code ec;
  ensure(!std::filesystem::is_directory(path, ec), "--{} {}: is a directory", option, path);
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  const std::string where = dir.empty() ? std::string(".") : dir.string();
  ensure(std::filesystem::is_directory(where, ec), "--{} {}: directory {} does not exist",
         option, path, where);
  ensure(::access(where.c_str(), W_OK) == 0, "--{} {}: directory {} is not writable", option,
         path, where);
}

}  // namespace

int cmd_bench(int argc, char** argv) {
  Args args(argc, argv, 1, {"help", "no-baselines", "no-host-cost", "time-wrong"},
            {"shape", "m", "entry", "replays", "warm-ms", "min-bytes", "json", "commit", "device",
             "define", "pattern-ceiling", "tma-pattern", "pattern-ctas",
             "tma-claims", "timeline"});
  if (args.has("help")) {
    fmt::print(fmt::runtime(kHelp), entry_names(bench::bench_entries()),
               entry_names(bench::tuning_entries()));
    return 0;
  }
  args.refuse_positional("bench");

  // A bad value is a usage error (exit 2). An output file's directory that is missing or
  // not writable is this machine's state: a failure (exit 1), as a failed write would be.
  const std::vector<bench::Shape> shapes =
      as_usage([&] { return bench::shapes_or_default(args.values("shape")); });
  bench::RunOptions options;
  options.ms = parse_token_counts(args);
  options.entries = as_usage([&] {
    return bench::parse_entries(args.value_or("entry", entry_names(bench::bench_entries())));
  });
  options.replays = parse_one_u32(args, "replays", 7);
  usage_ensure(options.replays >= 1, "--replays must be at least 1");
  options.warm_ms = parse_one_u32(args, "warm-ms", 0);
  usage_ensure(options.warm_ms <= 60000,
               "--warm-ms must be at most 60000 (one minute per graph)");
  const std::uint32_t min_mib = parse_one_u32(args, "min-bytes", 768);
  // 1 TiB at most: more than any device holds, and the copy counts stay in 32 bits.
  usage_ensure(min_mib >= 1 && min_mib <= (1u << 20),
               "--min-bytes must be 1..1048576 MiB, not {}", min_mib);
  options.min_bytes = std::uint64_t{min_mib} << 20;
  options.baselines = !args.has("no-baselines");
  options.time_wrong = args.has("time-wrong");
  options.defines = parse_defines(args);
  options.timeline = args.value_or("timeline", "");
  // The records sit in the workspace, which the other entries need zero: only the runner
  // that reads them out after each entry may have the kernel write them.
  constexpr std::string_view kTimelineDefine = "METRALE_DIAG_TIMELINE";
  const bool timeline_defined =
      std::any_of(options.defines.begin(), options.defines.end(),
                  [&](const Define& d) { return d.name == kTimelineDefine; });
  usage_ensure(!timeline_defined,
               "--define {}: use --timeline FILE, which reads the records out", kTimelineDefine);
  if (!options.timeline.empty()) options.defines.push_back({std::string(kTimelineDefine), "1"});
  const std::vector<std::uint32_t> pattern_chunks =
      args.has("pattern-ceiling") ? parse_u32_list(*args.value("pattern-ceiling"), "--pattern-ceiling")
                                  : std::vector<std::uint32_t>{};
  for (const std::uint32_t c : pattern_chunks) {
    usage_ensure((c >= 128 && c <= 512 && (c & (c - 1)) == 0) || c == bench::kPackedChunk,
                 "--pattern-ceiling: {} is not a power of two in 128..512 nor {} (packed units)",
                 c, bench::kPackedChunk);
  }
  std::vector<bench::TmaBox> tma_boxes;
  if (const auto list = args.value("tma-pattern")) {
    // Every item is parsed, an empty one too (refused there), as --m's lists are.
    std::string_view rest = *list;
    for (;;) {
      const std::size_t comma = rest.find(',');
      tma_boxes.push_back(as_usage([&] { return bench::parse_tma_box(rest.substr(0, comma)); }));
      if (comma == std::string_view::npos) break;
      rest = rest.substr(comma + 1);
    }
  }
  const std::uint32_t pattern_ctas = parse_one_u32(args, "pattern-ctas", 2);
  usage_ensure(pattern_ctas >= 1, "--pattern-ctas must be at least 1");
  const std::vector<std::uint32_t> tma_claims =
      args.has("tma-claims") ? parse_u32_list(*args.value("tma-claims"), "--tma-claims")
                             : std::vector<std::uint32_t>{0};
  for (const std::uint32_t f : tma_claims) {
    usage_ensure(f <= 64, "--tma-claims: {} ranges per CTA is over 64", f);
  }
  const int ordinal = parse_device(args);
  const std::string json_path = args.value_or("json", "");
  // Fail before a long run rather than after it.
  if (!options.timeline.empty()) check_output_file("timeline", options.timeline);
  if (!json_path.empty()) check_output_file("json", json_path);

  // Everything above needs no GPU, so --help and option errors work anywhere.
  if (const std::string reason = cuda_unavailable_reason(); !reason.empty()) {
    if (reason.starts_with("no CUDA device")) fail("{}", reason);
    fail("no CUDA device to benchmark: {}", reason);
  }
  CudaBackend gpu(ordinal);
  ModuleCache cache(gpu);
  const bench::Stream stream(gpu);

  const auto started = std::chrono::steady_clock::now();
  bench::BenchRun run;
  run.device = gpu.info();
  METRALE_CU(cuDriverGetVersion, &run.driver_version);
  run.nvrtc_version = nvrtc_version();
  run.commit = args.value_or("commit", "");
  if (const char* env = std::getenv("METRALE_GIT_COMMIT"); run.commit.empty() && env != nullptr) {
    run.commit = env;
  }
  run.date = utc_now();
  run.replays = options.replays;
  run.min_bytes = options.min_bytes;
  run.warm_ms = options.warm_ms;
  run.baselines = options.baselines;
  if (options.min_bytes < 4 * run.device.l2_bytes) {
    fmt::print(stderr,
               "metrale bench: warning: --min-bytes {} MiB is under 4x the {} MiB L2; weights "
               "may be served from L2 and the times flatter the kernels\n",
               min_mib, run.device.l2_bytes >> 20);
  }

  fmt::print(stderr, "metrale bench: compiling the kernels for {}\n", gpu.target());
  run.compiles = bench::measure_compile_times(gpu);
  cache.warm_up();
  fmt::print(stderr, "metrale bench: measuring the read ceiling\n");
  run.ceiling = bench::measure_read_ceiling(gpu, stream, options.replays);
  run.compiles.push_back({"read_ceiling (bench)", run.ceiling.compile_ms, 0});
  run.graph_gaps = bench::measure_graph_gaps(gpu, stream, options.replays);
  if (!args.has("no-host-cost")) {
    fmt::print(stderr, "metrale bench: measuring the launcher's host cost\n");
    run.launch_cost = bench::measure_launch_cost(gpu, cache, stream);
  }
  fmt::print(stderr, "metrale bench: measuring the read ceiling at each layer's size\n");
  for (const bench::Shape& shape : shapes) {
    if (run.size_ceiling(shape.n, shape.k) != nullptr) continue;
    const std::uint64_t bytes = bench::fp8_weight_bytes(shape);
    const bench::Ceiling sc = bench::measure_size_ceiling(gpu, stream, options.replays,
                                                          (bytes + 15) / 16 * 16, options.min_bytes);
    run.size_ceilings.push_back({shape.n, shape.k, sc.bytes_per_launch, sc.timing.launches, sc.timing});
  }
  for (const bench::Shape& shape : shapes) {
    for (const std::uint32_t chunk : pattern_chunks) {
      if (chunk == bench::kPackedChunk ? shape.n % 128 != 0 || shape.k % 128 != 0
                                       : shape.k % chunk != 0) {
        continue;
      }
      const bench::PatternCeiling p = bench::measure_pattern_ceiling(
          gpu, stream, options.replays, shape.n, shape.k, chunk, pattern_ctas);
      fmt::print("pattern ceiling {} ({}x{}): {}-byte chunks, {} CTAs: {:.0f} us, {:.1f} GB/s, "
                 "{:.1f} % of the read ceiling\n",
                 shape.label(), shape.n, shape.k, chunk, p.ctas, p.timing.median_us, p.gbps,
                 100.0 * p.gbps / run.ceiling.gbps);
    }
    for (const bench::TmaBox& box : tma_boxes) {
      if (shape.k % box.bytes != 0) continue;
      for (const std::uint32_t claims : tma_claims) {
        const bench::TmaPatternCeiling p = bench::measure_tma_pattern_ceiling(
            gpu, stream, options.replays, shape.n, shape.k, box, pattern_ctas, claims);
        fmt::print("tma pattern {} ({}x{}): boxes {}x{} bytes, {} stages, {} CTAs, {}: {:.2f} "
                   "us (min {:.2f}, max {:.2f}), {:.1f} GB/s, {:.1f} % of the read ceiling\n",
                   shape.label(), shape.n, shape.k, box.rows, box.bytes, box.stages, p.ctas,
                   claims == 0 ? std::string("split by index")
                               : fmt::format("{} claimed ranges per CTA", claims),
                   p.timing.median_us, p.timing.min_us, p.timing.max_us, p.gbps,
                   100.0 * p.gbps / run.ceiling.gbps);
      }
    }
  }

  bench::Runner runner(gpu, cache, stream, options);
  if (options.baselines) {
    run.compiles.push_back({"baseline_prep (bench)", runner.prep_compile_ms(), 0});
  }
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    fmt::print(stderr, "metrale bench: [{}/{}] {} ({}x{})\n", i + 1, shapes.size(),
               shapes[i].label(), shapes[i].n, shapes[i].k);
    for (bench::CaseResult& c : runner.run_shape(shapes[i])) run.cases.push_back(std::move(c));
  }

  run.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  bench::print_report(run);
  if (!json_path.empty()) {
    bench::write_json(run, json_path);
    fmt::print("wrote {}\n", json_path);
  }
  const std::uint32_t bad = run.count(bench::Status::wrong) + run.count(bench::Status::error);
  if (bad > 0) {
    fmt::print(stderr, "metrale bench: {} result(s) WRONG or ERROR\n", bad);
    return 1;
  }
  return 0;
}

}  // namespace metrale::cli
