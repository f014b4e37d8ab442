#include "metrale/bench/report.hpp"

#include <cmath>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "metrale/error.hpp"

namespace metrale::bench {

const char* status_name(Status s) {
  switch (s) {
    case Status::ok: return "ok";
    case Status::wrong: return "WRONG";
    case Status::error: return "ERROR";
  }
  return "?";
}

const SizeCeiling* BenchRun::size_ceiling(std::uint32_t n, std::uint32_t k) const {
  for (const SizeCeiling& sc : size_ceilings) {
    if (sc.n == n && sc.k == k) return &sc;
  }
  return nullptr;
}

std::uint32_t BenchRun::count(Status s) const {
  std::uint32_t n = 0;
  for (const CaseResult& c : cases) {
    for (const EntryResult& e : c.entries) n += e.status == s ? 1 : 0;
  }
  return n;
}

const BaselineResult* find_baseline(const CaseResult& c, const std::string& name) {
  for (const BaselineResult& b : c.baselines) {
    if (b.name == name && b.ok) return &b;
  }
  return nullptr;
}

double speedup(const EntryResult& e, const BaselineResult* b) {
  if (b == nullptr || e.status != Status::ok || e.timing.median_us <= 0.0) return 0.0;
  return b->timing.median_us / e.timing.median_us;
}

namespace {

constexpr const char* kBf16 = "cublas_bf16";
constexpr const char* kFp8 = "cublaslt_fp8";

double pct(std::uint64_t bytes, double us, double ceiling_gbps) {
  return ceiling_gbps > 0.0 ? 100.0 * gbps(bytes, us) / ceiling_gbps : 0.0;
}

// The time a launch would take streaming its bytes at the ceiling.
double floor_time_us(std::uint64_t bytes, double ceiling_gbps) {
  return ceiling_gbps > 0.0 ? static_cast<double>(bytes) / ceiling_gbps / 1e3 : 0.0;
}

std::string ratio(double x) { return x > 0.0 ? fmt::format("{:.2f}x", x) : "-"; }

void print_timed_row(std::uint32_t m, const std::string& name, const Timing& t,
                     std::uint64_t bytes, double ceiling, const std::string& vs_bf16,
                     const std::string& vs_fp8, const std::string& note) {
  fmt::print("  {:>3}  {:<24} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.1f} {:>6.1f}% {:>8} {:>8}  {}\n",
             m, name, t.median_us, t.min_us, t.max_us, gbps(bytes, t.median_us),
             pct(bytes, t.median_us, ceiling), vs_bf16, vs_fp8, note);
}

// An entry whose check failed, timed all the same (bench --time-wrong).
bool timed_though_wrong(const EntryResult& e) {
  return e.status == Status::wrong && e.timing.launches > 0;
}

void print_case(const CaseResult& c, double ceiling) {
  const BaselineResult* bf16 = find_baseline(c, kBf16);
  const BaselineResult* fp8 = find_baseline(c, kFp8);
  for (const EntryResult& e : c.entries) {
    if (timed_though_wrong(e)) {
      print_timed_row(c.m, e.entry, e.timing, c.weight_bytes, ceiling, "-", "-",
                      fmt::format("WRONG (timed with --time-wrong): {}", e.detail));
      continue;
    }
    if (e.status != Status::ok) {
      fmt::print("  {:>3}  {:<24} {:>9}  {}\n", c.m, e.entry, status_name(e.status), e.detail);
      continue;
    }
    print_timed_row(c.m, e.entry, e.timing, c.weight_bytes, ceiling, ratio(speedup(e, bf16)),
                    ratio(speedup(e, fp8)),
                    fmt::format("ok (max {} ulp over the floor)", e.check.max_ulp));
  }
  for (const BaselineResult& b : c.baselines) {
    const std::string name = b.rows != c.m ? fmt::format("{} [m->{}]", b.name, b.rows) : b.name;
    if (!b.ok) {
      fmt::print("  {:>3}  {:<24} {:>9}  {}\n", c.m, name, "n/a", b.error);
      continue;
    }
    print_timed_row(c.m, name, b.timing, b.weight_bytes, ceiling, "", "",
                    fmt::format("{} copies, {} kernels, {} programmatic edges", b.copies,
                                b.timing.kernel_nodes, b.timing.programmatic_edges));
  }
  const auto timed = [&](const std::string& entry) {
    for (const EntryResult& e : c.entries) {
      if (e.entry == entry && e.status == Status::ok) {
        return fmt::format(" ({:.2f} us)", e.timing.median_us);
      }
    }
    return std::string(" (not measured)");
  };
  fmt::print("  {:>3}  automatic choice: {}{}; fastest without PDL: {}\n", c.m, c.choice,
             timed(c.choice), c.best.empty() ? "none" : c.best);
  fmt::print("  {:>3}  automatic choice with PDL: {}{}; fastest with PDL: {}\n", c.m,
             c.choice_pdl, timed(c.choice_pdl), c.best_pdl.empty() ? "none" : c.best_pdl);
}

}  // namespace

void print_report(const BenchRun& run) {
  const DeviceInfo& d = run.device;
  fmt::print("device: {} ({}, {} SMs, L2 {} MiB, DRAM {} GB/s peak), driver {}.{}, NVRTC {}\n",
             d.name, d.target(), d.sm_count, d.l2_bytes >> 20, d.dram_gbps,
             run.driver_version / 1000,
             (run.driver_version % 1000) / 10, run.nvrtc_version);
  fmt::print("run: {}, commit {}, {} replays per measurement, >= {} MiB of weights per graph\n",
             run.date, run.commit.empty() ? "unknown" : run.commit, run.replays,
             run.min_bytes >> 20);
  const Ceiling& c = run.ceiling;
  fmt::print("read ceiling: {:.1f} GB/s (median; best {:.1f}, worst {:.1f}), {} MiB per launch, "
             "grid {} x {} threads\n",
             c.gbps, c.gbps_best, c.gbps_worst, c.bytes_per_launch >> 20, c.grid, c.block);
  fmt::print("empty kernels in a graph: {:.2f} us per launch with one CTA (min {:.2f}, max "
             "{:.2f}), {:.2f} us with 2 CTAs x 256 threads per SM (min {:.2f}, max {:.2f}), "
             "{:.2f} us with 144 CTAs x 128 threads in clusters of 8 (min {:.2f}, max {:.2f})\n",
             run.graph_gaps.one_cta.median_us, run.graph_gaps.one_cta.min_us,
             run.graph_gaps.one_cta.max_us, run.graph_gaps.full.median_us,
             run.graph_gaps.full.min_us, run.graph_gaps.full.max_us,
             run.graph_gaps.clusters.median_us, run.graph_gaps.clusters.min_us,
             run.graph_gaps.clusters.max_us);
  const LaunchCost& l = run.launch_cost;
  if (l.calls == 0) {
    fmt::print("launcher host cost: not measured (--no-host-cost)\n");
  } else {
    fmt::print("launcher host cost: {} {:.0f} ns per call (median of {} batches of {}; "
               "min {:.0f}, max {:.0f}); the library's part without the driver {:.0f} ns; "
               "an empty kernel with the same parameters through the driver alone {:.0f} ns, "
               "with no parameters {:.0f} ns\n",
               l.entry, l.median_ns, l.batch > 0 ? l.calls / l.batch : 0, l.batch, l.min_ns,
               l.max_ns, l.library_median_ns, l.driver_median_ns, l.driver_no_args_median_ns);
    fmt::print("launcher host cost behind a busy GPU (each batch queued behind a 2 ms "
               "kernel): {} {:.0f} ns per call (median of {} batches); the empty kernel "
               "through the driver alone {:.0f} ns\n",
               l.entry, l.busy_median_ns, l.batch > 0 ? l.calls / l.batch / 10 : 0,
               l.busy_driver_median_ns);
    fmt::print("launcher host cost: w8a16_gemm_m16_streamk {:.0f} ns per call (median); the "
               "library's part without the driver {:.0f} ns; one tensor-map encode by the "
               "driver {:.0f} ns (two per call)\n",
               l.streamk_median_ns, l.streamk_library_median_ns, l.tensor_map_median_ns);
    fmt::print("launcher host cost: w8a16_gemm_m16_auto {:.0f} ns per call (median; its plan "
               "here: {}); the library's part without the driver {:.0f} ns (the plan, the "
               "kernel lookup, the launcher)\n",
               l.auto_median_ns, l.auto_entry, l.auto_library_median_ns);
  }
  fmt::print("NVRTC compile for {}:", d.target());
  for (const CompileTime& t : run.compiles) {
    fmt::print(" {} {:.0f} ms", t.module, t.ms);
    if (t.image_bytes > 0) fmt::print(" ({} KiB)", t.image_bytes >> 10);
    fmt::print(";");
  }
  fmt::print("\n");
  fmt::print("\nus: time per launch (median, min, max over replays); GB/s and % of the ceiling "
             "count the bytes each kernel streams (FP8 weights + FP32 block scales for the "
             "library; BF16 weights for cuBLAS; FP8 weights for cuBLASLt); speed-up = "
             "baseline us / entry us. [m->16]: the baseline multiplied 16 padded rows.\n");

  const Shape* last = nullptr;
  for (const CaseResult& cr : run.cases) {
    if (last == nullptr || last->n != cr.shape.n || last->k != cr.shape.k ||
        last->label() != cr.shape.label()) {
      const double floor_us = floor_time_us(cr.weight_bytes, c.gbps);
      fmt::print("\n{}: N={} K={}, {:.2f} MiB of weights + scales, floor {:.2f} us, {} copies\n",
                 cr.shape.label(), cr.shape.n, cr.shape.k,
                 static_cast<double>(cr.weight_bytes) / (1 << 20), floor_us, cr.copies);
      if (const SizeCeiling* sc = run.size_ceiling(cr.shape.n, cr.shape.k)) {
        fmt::print("  the read ceiling's kernel on this many bytes per launch: {:.2f} us ({:.1f} % of "
                   "the read ceiling), {} copies\n",
                   sc->timing.median_us, pct(sc->bytes, sc->timing.median_us, c.gbps), sc->copies);
      }
      fmt::print("  {:>3}  {:<24} {:>9} {:>9} {:>9} {:>9} {:>7} {:>8} {:>8}  {}\n", "m", "kernel",
                 "us", "min", "max", "GB/s", "%ceil", "vs bf16", "vs fp8", "check");
      last = &cr.shape;
    }
    print_case(cr, c.gbps);
  }
  const std::uint32_t wrong = run.count(Status::wrong);
  const std::uint32_t errors = run.count(Status::error);
  fmt::print("\n{} WRONG, {} ERROR; {} cases in {:.0f} s\n", wrong, errors, run.cases.size(),
             run.wall_s);
}

namespace {

std::string js(std::string_view s) {
  std::string out = "\"";
  for (const char ch : s) {
    const auto u = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (ch == '\n') {
      out += "\\n";
    } else if (u < 0x20) {
      out += fmt::format("\\u{:04x}", u);
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

// JSON has no NaN or infinity; an absent value is null.
std::string num(double v) { return std::isfinite(v) ? fmt::format("{:.6g}", v) : "null"; }

std::string list(const std::vector<double>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i > 0 ? ", " : "") + num(v[i]);
  return out + "]";
}

std::string timing_fields(const Timing& t, std::uint64_t bytes, double ceiling) {
  return fmt::format("\"us\": {}, \"us_min\": {}, \"us_max\": {}, \"replay_us\": {}, "
                     "\"gbps\": {}, \"pct_ceiling\": {}, \"graph_kernels\": {}, "
                     "\"graph_programmatic_edges\": {}",
                     num(t.median_us), num(t.min_us), num(t.max_us), list(t.replay_us),
                     num(gbps(bytes, t.median_us)), num(pct(bytes, t.median_us, ceiling)),
                     t.kernel_nodes, t.programmatic_edges);
}

std::string speedup_json(double x) { return x > 0.0 ? num(x) : "null"; }

}  // namespace

void write_json(const BenchRun& run, const std::string& path) {
  std::string o;
  auto out = std::back_inserter(o);
  const DeviceInfo& d = run.device;
  const Ceiling& c = run.ceiling;
  fmt::format_to(out, "{{\n  \"tool\": \"metrale bench\",\n  \"date\": {},\n  \"commit\": {},\n",
                 js(run.date), run.commit.empty() ? "null" : js(run.commit));
  fmt::format_to(out,
                 "  \"device\": {{\"name\": {}, \"target\": {}, \"sm_count\": {}, "
                 "\"l2_bytes\": {}, \"total_memory\": {}, \"dram_gbps\": {}, "
                 "\"driver_version\": {}}},\n"
                 "  \"nvrtc\": {},\n",
                 js(d.name), js(d.target()), d.sm_count, d.l2_bytes, d.total_memory, d.dram_gbps,
                 run.driver_version, js(run.nvrtc_version));
  fmt::format_to(out,
                 "  \"method\": {{\"timing\": {}, \"replays\": {}, \"statistic\": \"median\", "
                 "\"min_bytes\": {}, \"baselines\": {}, \"warm_ms\": {}, \"order\": {}, "
                 "\"wall_s\": {:.1f}}},\n",
                 js("one launch per weight copy captured in a CUDA graph, replayed; the timed "
                    "replays queued back to back behind an untimed one, an event between each "
                    "two; time per launch = replay time / copies"),
                 run.replays, run.min_bytes, run.baselines ? "true" : "false", run.warm_ms,
                 js("per layer: the plain entries and baselines of every m, then the PDL "
                    "entries"),
                 run.wall_s);
  fmt::format_to(out,
                 "  \"ceiling\": {{\"gbps\": {}, \"gbps_best\": {}, \"gbps_worst\": {}, "
                 "\"bytes_per_launch\": {}, \"launches_per_replay\": {}, \"grid\": {}, "
                 "\"block\": {}, \"replay_us\": {}}},\n",
                 num(c.gbps), num(c.gbps_best), num(c.gbps_worst), c.bytes_per_launch,
                 c.timing.launches, c.grid, c.block, list(c.timing.replay_us));
  fmt::format_to(out,
                 "  \"graph_gap\": {{\"one_cta_us\": {}, \"one_cta_replay_us\": {}, "
                 "\"two_ctas_per_sm_us\": {}, \"two_ctas_per_sm_replay_us\": {}, "
                 "\"clusters_of_8_us\": {}, \"clusters_of_8_replay_us\": {}}},\n",
                 num(run.graph_gaps.one_cta.median_us), list(run.graph_gaps.one_cta.replay_us),
                 num(run.graph_gaps.full.median_us), list(run.graph_gaps.full.replay_us),
                 num(run.graph_gaps.clusters.median_us), list(run.graph_gaps.clusters.replay_us));
  const LaunchCost& l = run.launch_cost;
  fmt::format_to(out,
                 "  \"launch_cost\": {{\"entry\": {}, \"median_ns\": {}, \"min_ns\": {}, "
                 "\"max_ns\": {}, \"calls\": {}, \"batch\": {}, \"library_median_ns\": {}, "
                 "\"driver_median_ns\": {}, \"driver_no_args_median_ns\": {}, "
                 "\"busy_median_ns\": {}, \"busy_driver_median_ns\": {}, "
                 "\"streamk_median_ns\": {}, \"streamk_library_median_ns\": {}, "
                 "\"tensor_map_median_ns\": {}, \"auto_entry\": {}, \"auto_median_ns\": {}, "
                 "\"auto_library_median_ns\": {}}},\n"
                 "  \"compile\": [",
                 js(l.entry), num(l.median_ns), num(l.min_ns), num(l.max_ns), l.calls, l.batch,
                 num(l.library_median_ns), num(l.driver_median_ns),
                 num(l.driver_no_args_median_ns), num(l.busy_median_ns),
                 num(l.busy_driver_median_ns), num(l.streamk_median_ns),
                 num(l.streamk_library_median_ns), num(l.tensor_map_median_ns),
                 js(l.auto_entry), num(l.auto_median_ns), num(l.auto_library_median_ns));
  for (std::size_t i = 0; i < run.compiles.size(); ++i) {
    const CompileTime& t = run.compiles[i];
    fmt::format_to(out, "{}\n    {{\"module\": {}, \"ms\": {}, \"image_bytes\": {}}}",
                   i > 0 ? "," : "", js(t.module), num(t.ms), t.image_bytes);
  }
  fmt::format_to(out, "\n  ],\n  \"results\": [");
  for (std::size_t i = 0; i < run.cases.size(); ++i) {
    const CaseResult& cr = run.cases[i];
    const double floor_us = floor_time_us(cr.weight_bytes, c.gbps);
    const SizeCeiling* sc = run.size_ceiling(cr.shape.n, cr.shape.k);
    fmt::format_to(out,
                   "{}\n    {{\"model\": {}, \"layer\": {}, \"n\": {}, \"k\": {}, \"m\": {}, "
                   "\"weight_bytes\": {}, \"copies\": {}, \"floor_us\": {}, \"choice\": {}, "
                   "\"choice_pdl\": {}, \"best\": {}, \"best_pdl\": {}, "
                   "\"size_ceiling_us\": {},\n     \"entries\": [",
                   i > 0 ? "," : "", js(cr.shape.model), js(cr.shape.layer), cr.shape.n,
                   cr.shape.k, cr.m, cr.weight_bytes, cr.copies, num(floor_us), js(cr.choice),
                   js(cr.choice_pdl), js(cr.best), js(cr.best_pdl),
                   sc != nullptr ? num(sc->timing.median_us) : "null");
    for (std::size_t j = 0; j < cr.entries.size(); ++j) {
      const EntryResult& e = cr.entries[j];
      fmt::format_to(out, "{}\n      {{\"entry\": {}, \"status\": {}, \"detail\": {}, ",
                     j > 0 ? "," : "", js(e.entry), js(status_name(e.status)), js(e.detail));
      if (timed_though_wrong(e)) {
        fmt::format_to(out, "{}, ", timing_fields(e.timing, cr.weight_bytes, c.gbps));
      }
      if (e.status == Status::ok) {
        fmt::format_to(out, "{}, \"speedup_vs_cublas_bf16\": {}, \"speedup_vs_cublaslt_fp8\": {}, ",
                       timing_fields(e.timing, cr.weight_bytes, c.gbps),
                       speedup_json(speedup(e, find_baseline(cr, kBf16))),
                       speedup_json(speedup(e, find_baseline(cr, kFp8))));
      }
      fmt::format_to(out,
                     "\"check\": {{\"checked\": {}, \"failures\": {}, \"max_ulp\": {}, "
                     "\"max_abs\": {}, \"max_abs_over_floor\": {}}}}}",
                     e.check.checked, e.check.failures, e.check.max_ulp, num(e.check.max_abs),
                     num(e.check.max_abs_over_floor));
    }
    fmt::format_to(out, "\n     ],\n     \"baselines\": [");
    for (std::size_t j = 0; j < cr.baselines.size(); ++j) {
      const BaselineResult& b = cr.baselines[j];
      fmt::format_to(out,
                     "{}\n      {{\"name\": {}, \"ok\": {}, \"rows\": {}, \"copies\": {}, "
                     "\"weight_bytes\": {}, ",
                     j > 0 ? "," : "", js(b.name), b.ok ? "true" : "false", b.rows, b.copies,
                     b.weight_bytes);
      if (b.ok) {
        fmt::format_to(out, "{}}}", timing_fields(b.timing, b.weight_bytes, c.gbps));
      } else {
        fmt::format_to(out, "\"error\": {}}}", js(b.error));
      }
    }
    fmt::format_to(out, "\n     ]}}");
  }
  fmt::format_to(out, "\n  ],\n  \"wrong\": {},\n  \"errors\": {}\n}}\n",
                 run.count(Status::wrong), run.count(Status::error));

  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  ensure(file.good(), "--json {}: cannot open the file for writing", path);
  file << o;
  file.close();
  ensure(!file.fail(), "--json {}: writing the file failed", path);
}

}  // namespace metrale::bench
