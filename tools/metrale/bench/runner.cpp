#include "metrale/bench/runner.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>

#include "driver_api.hpp"
#include "metrale/bench/oracle_check.hpp"
#include "metrale/bench/plan_name.hpp"
#include "metrale/bench/schedule.hpp"
#include "metrale/error.hpp"
#include "metrale/fill_random.hpp"
#include "metrale/host_reference.hpp"
#include "metrale/kernel_launch.hpp"
#include "metrale/kernel_variants.hpp"
#include "metrale/log.hpp"
#include "metrale/m16_plan.hpp"
#include "metrale/w8a16_gemv_batch16.hpp"

namespace metrale::bench {
namespace {

// The fastest correct entry of those launched with PDL (`pdl`) or without it, so that
// each plan is set beside the entries a caller like it can launch; empty if none ran.
std::string fastest(const std::vector<EntryResult>& entries, bool pdl) {
  const EntryResult* best = nullptr;
  for (const EntryResult& e : entries) {
    if (e.status != Status::ok || is_pdl_entry(e.entry) != pdl) continue;
    if (best == nullptr || e.timing.median_us < best->timing.median_us) best = &e;
  }
  return best != nullptr ? best->entry : std::string();
}

// A BF16 NaN: an output the kernel never writes fails the check.
constexpr std::uint16_t kPoison = 0xFFFF;
constexpr std::uint32_t kMaxRows = 16;      // the M tile: the largest m any entry takes
constexpr std::uint32_t kFillThreads = 256;
constexpr std::uint64_t kScaleAlign = 256;  // keeps each copy's scales on their own lines
// Poisoned elements on each side of an output block: a write past the block's 16 rows, or
// before them, fails the check.
constexpr std::uint64_t kGuardElems = 1024;

std::uint64_t round_up(std::uint64_t v, std::uint64_t to) { return (v + to - 1) / to * to; }

std::uint32_t copies_for(std::uint64_t min_bytes, std::uint64_t bytes_per_copy) {
  const std::uint64_t copies = (min_bytes + bytes_per_copy - 1) / bytes_per_copy;
  ensure(copies <= std::numeric_limits<std::uint32_t>::max(),
         "{} copies of {} bytes for --min-bytes {} MiB: lower --min-bytes", copies,
         bytes_per_copy, min_bytes >> 20);
  return static_cast<std::uint32_t>(copies < 1 ? 1 : copies);
}

std::uint32_t as_count(std::uint64_t count) {
  ensure(count <= std::numeric_limits<std::uint32_t>::max(),
         "fill of {} elements exceeds the fill kernels' u32 count", count);
  return static_cast<std::uint32_t>(count);
}

// How many of `values` are not the poison.
std::uint64_t written(std::span<const std::uint16_t> values) {
  return static_cast<std::uint64_t>(
      std::count_if(values.begin(), values.end(), [](std::uint16_t v) { return v != kPoison; }));
}

}  // namespace

// 16 rows of N outputs between two guard regions: rows() is what a launch is given, the
// whole buffer is poisoned before it and downloaded after it.
struct Runner::OutputBlock {
  DeviceBuffer buffer;
  std::uint64_t row_elems = 0;  // 16 x N

  OutputBlock() = default;
  OutputBlock(const CudaBackend& gpu, std::uint32_t n)
      : buffer(gpu, (std::uint64_t{kMaxRows} * n + 2 * kGuardElems) * 2),
        row_elems(std::uint64_t{kMaxRows} * n) {}
  DevicePtr rows() const { return buffer.get() + kGuardElems * 2; }
  std::uint64_t elems() const { return row_elems + 2 * kGuardElems; }
  // The 16 rows of a downloaded block, and how many of its guard elements were written.
  static std::span<const std::uint16_t> rows_of(std::span<const std::uint16_t> all) {
    return all.subspan(kGuardElems, all.size() - 2 * kGuardElems);
  }
  static std::uint64_t guards_written(std::span<const std::uint16_t> all) {
    return written(all.first(kGuardElems)) + written(all.last(kGuardElems));
  }
};

// The scalar reference at one m: on every copy, on the device ([copies][m][N], what the
// check of every launch reads), and on the first and the last copy on the host (what the
// check launch and the timed graph's last launch read).
struct Runner::References {
  DeviceBuffer all;
  std::vector<std::uint16_t> first, last;
};

// One shape's operands: `copies` rotations of FP8 weights and block scales (so the
// weights a launch reads were last touched >= min_bytes of traffic ago and cannot be in
// L2), one activation block and output block shared by all launches (they are tiny and
// L2-resident in an engine too), and the baselines' operands derived from the same
// weights.
struct Runner::ShapeData {
  Shape shape;
  std::uint64_t nk = 0;
  std::uint64_t scale_stride = 0;  // bytes between copies' block scales
  std::uint32_t copies = 0;
  DeviceBuffer weights, scales, x;
  OutputBlock out;
  // The check graph's outputs, one 16-row block per launch (copies x 16 x N).
  DeviceBuffer out_all;
  DeviceBuffer check_result;  // output_check.cu's two counters
  std::uint32_t bf16_copies = 0;
  DeviceBuffer w_bf16, x_fp8;
  OutputBlock out_baseline;
  DeviceBuffer ref_baseline;  // FP32 [16, N]: what a baseline should have computed

  DevicePtr weight(std::uint32_t c) const { return weights.get() + c * nk; }
  DevicePtr scale(std::uint32_t c) const { return scales.get() + c * scale_stride; }
  DevicePtr bf16_weight(std::uint32_t c) const { return w_bf16.get() + c * nk * 2; }
};

Runner::Runner(const CudaBackend& gpu, ModuleCache& cache, const Stream& stream,
               const RunOptions& options)
    : gpu_(gpu), cache_(cache), stream_(stream), options_(options) {
  fill_grid_ = static_cast<std::uint32_t>(gpu.info().sm_count) * 8;
  check_ = std::make_unique<BenchModule>(gpu, "output_check.cu");
  // The workspace of stream-K (up to 4 CTAs per SM) and of the skinny entry (64 MiB: its
  // 8-warp forms on every default shape), zeroed once (each launch leaves it zeroed).
  resources_.device = plan_device(gpu.info());
  const std::uint64_t workspace_bytes =
      std::max<std::uint64_t>(std::uint64_t{64} << 20, w8a16_gemm_m16_streamk_workspace_bytes(
                                                           1u << 20, 4 * resources_.device.sm_count));
  workspace_ = DeviceBuffer(gpu, workspace_bytes);
  gpu.fill_bytes(workspace_.get(), 0, workspace_bytes);
  gpu.synchronize();
  resources_.workspace = {workspace_.get(), workspace_bytes};
  // The automatic call's kernels, with the run's extra defines as every other entry's.
  resources_.kernels = [this](std::string_view entry) { return kernel_with_defines(entry); };
  if (!options_.timeline.empty()) timeline_ = std::make_unique<TimelineWriter>(options_.timeline);
  if (!options_.baselines) return;
  prep_ = std::make_unique<BenchModule>(gpu, "baseline_prep.cu");
  // A missing or broken cuBLAS is reported per baseline; the library is still measured.
  try {
    cublas_ = std::make_unique<CublasBaselines>(gpu, stream);
  } catch (const Error& e) {
    cublas_error_ = e.what();
  }
}

Runner::~Runner() = default;

// The library's fill launchers on the benchmark's stream, for counts checked to fit.
void Runner::fill_fp8(DevicePtr p, std::uint64_t count, std::uint32_t seed) {
  // 0x7E: every finite E4M3 magnitude, as real checkpoints use the whole range.
  fill_random_fp8(cache_, p, as_count(count), seed, 0x7E, stream_.handle());
}

void Runner::fill_f32(DevicePtr p, std::uint64_t count, std::uint32_t seed, float lo,
                      float hi) {
  fill_random_f32(cache_, p, as_count(count), seed, lo, hi, stream_.handle());
}

void Runner::fill_bf16(DevicePtr p, std::uint64_t count, std::uint32_t seed, float scale) {
  fill_random_bf16(cache_, p, as_count(count), seed, scale, stream_.handle());
}

void Runner::poison(DevicePtr p, std::uint64_t count) {
  fill_u16(cache_, p, as_count(count), kPoison, stream_.handle());
}

void Runner::poison(const OutputBlock& out) { poison(out.buffer.get(), out.elems()); }

std::vector<std::uint16_t> Runner::download(const OutputBlock& out) const {
  std::vector<std::uint16_t> all(out.elems());
  gpu_.download(all.data(), out.buffer.get(), all.size() * 2);
  return all;
}

std::vector<float> Runner::baseline_reference(const ShapeData& d, std::string_view kernel,
                                              DevicePtr x, DevicePtr w, DevicePtr w_scale,
                                              DevicePtr x_scale, std::uint32_t rows) {
  const std::uint64_t count = std::uint64_t{rows} * d.shape.n;
  KernelLaunch launch(gpu_, prep_->kernel(kernel));
  launch.grid({fill_grid_, 1, 1}).block({kFillThreads, 1, 1}).arg_ptr(x).arg_ptr(w);
  if (w_scale.address != 0) launch.arg_ptr(w_scale).arg_ptr(x_scale);
  launch.arg_ptr(d.ref_baseline.get()).arg_u32(rows).arg_u32(d.shape.n).arg_u32(d.shape.k);
  launch.launch(stream_.handle());
  stream_.synchronize();
  std::vector<float> ref(count);
  gpu_.download(ref.data(), d.ref_baseline.get(), count * 4);
  return ref;
}

void Runner::check_baseline_output(const ShapeData& d, std::uint32_t rows,
                                   const std::vector<float>& ref, std::string_view name) const {
  // Every value the call should have written (its output was poisoned with a BF16 NaN) is
  // written and close to the baseline's own product, computed from its own operands by
  // the reference kernels: a baseline that wrote nothing, garbage or another product is
  // not timed. The tolerance allows another order of the FP32 adds and the rounding to
  // BF16, not the library's budget: it catches a wrong layout, not an ulp. Nothing
  // outside the output block may be written.
  const std::vector<std::uint16_t> all = download(d.out_baseline);
  const std::uint64_t stray = OutputBlock::guards_written(all);
  ensure(stray == 0, "{}: {} values written outside the output block", name, stray);
  const auto got = OutputBlock::rows_of(all);
  const std::uint32_t n = d.shape.n;
  for (std::uint32_t t = 0; t < rows; ++t) {
    const auto row = std::span(ref).subspan(std::uint64_t{t} * n, n);
    double sum_sq = 0.0;
    for (const float r : row) sum_sq += static_cast<double>(r) * r;
    const double row_rms = std::sqrt(sum_sq / n);
    for (std::uint32_t j = 0; j < n; ++j) {
      const std::uint16_t bits = got[std::uint64_t{t} * n + j];
      const double g = bf16_to_float(bits);
      ensure(std::isfinite(g), "{}: output ({}, {}) is {} after the call (0x{:04x})", name, t,
             j, bits == kPoison ? "unwritten" : "not finite", bits);
      const double tolerance = 0x1p-6 * std::fabs(row[j]) + 0x1p-8 * row_rms;
      ensure(std::fabs(g - row[j]) <= tolerance,
             "{}: output ({}, {}) is {} where its operands give {} (row RMS {:.4g})", name, t,
             j, g, row[j], row_rms);
    }
  }
}

void Runner::check_memory(const Shape& shape, std::uint64_t needed) const {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  gpu_.make_current();
  METRALE_CU(cuMemGetInfo, &free_bytes, &total_bytes);
  ensure(needed <= free_bytes,
         "{}: the weight copies need {} MiB of device memory but only {} MiB of {} MiB are "
         "free (lower --min-bytes, or run fewer shapes at once)",
         shape.label(), needed >> 20, free_bytes >> 20, total_bytes >> 20);
}

std::vector<CaseResult> Runner::run_shape(const Shape& shape) {
  layer_warm_ = false;
  ShapeData d;
  d.shape = shape;
  d.nk = static_cast<std::uint64_t>(shape.n) * shape.k;
  d.scale_stride = round_up(block_scale_count(shape) * sizeof(float), kScaleAlign);
  d.copies = copies_for(options_.min_bytes, fp8_weight_bytes(shape));
  // The every-launch check runs one CTA row per copy (check_every_launch), a grid's y.
  ensure(d.copies <= 65535,
         "{}: {} weight copies for --min-bytes {} MiB, over the 65535 launches one graph is "
         "checked in: lower --min-bytes",
         shape.label(), d.copies, options_.min_bytes >> 20);
  d.bf16_copies = options_.baselines ? copies_for(options_.min_bytes, d.nk * 2) : 0;
  // The check graph's outputs and each m's references: up to 16 rows of N per copy each.
  const std::uint64_t check_bytes =
      (options_.ms.size() + 1) * d.copies * std::uint64_t{kMaxRows} * shape.n * 2;
  check_memory(shape, d.copies * (d.nk + d.scale_stride) + d.bf16_copies * d.nk * 2 +
                          check_bytes + (std::uint64_t{64} << 20));

  d.weights = DeviceBuffer(gpu_, d.copies * d.nk);
  d.scales = DeviceBuffer(gpu_, d.copies * d.scale_stride);
  d.x = DeviceBuffer(gpu_, std::uint64_t{kMaxRows} * shape.k * 2);
  d.out = OutputBlock(gpu_, shape.n);
  d.out_all = DeviceBuffer(gpu_, std::uint64_t{d.copies} * kMaxRows * shape.n * 2);
  d.check_result = DeviceBuffer(gpu_, 2 * sizeof(std::uint64_t));
  for (std::uint32_t c = 0; c < d.copies; ++c) {
    fill_fp8(d.weight(c), d.nk, 2 * c + 1);
    // Scales of real block-FP8 checkpoints sit around 2^-10 .. 2^-6.
    fill_f32(d.scale(c), block_scale_count(shape), 2 * c + 2, 0x1p-10f, 0x1p-6f);
  }
  fill_bf16(d.x.get(), std::uint64_t{kMaxRows} * shape.k, 0xA11CE, 1.0f);

  if (options_.baselines) {
    d.w_bf16 = DeviceBuffer(gpu_, d.bf16_copies * d.nk * 2);
    d.x_fp8 = DeviceBuffer(gpu_, std::uint64_t{kMaxRows} * shape.k);
    d.out_baseline = OutputBlock(gpu_, shape.n);
    d.ref_baseline = DeviceBuffer(gpu_, std::uint64_t{kMaxRows} * shape.n * 4);
    const KernelHandle dequantize = prep_->kernel("dequantize_fp8_to_bf16");
    for (std::uint32_t c = 0; c < d.bf16_copies; ++c) {
      KernelLaunch(gpu_, dequantize)
          .grid({fill_grid_, 1, 1}).block({kFillThreads, 1, 1})
          .arg_ptr(d.weight(c % d.copies)).arg_ptr(d.scale(c % d.copies))
          .arg_ptr(d.bf16_weight(c)).arg_u32(shape.n).arg_u32(shape.k)
          .launch(stream_.handle());
    }
    fill_fp8(d.x_fp8.get(), std::uint64_t{kMaxRows} * shape.k, 0xF8);
  }
  stream_.synchronize();

  std::vector<CaseResult> results(options_.ms.size());
  std::vector<PlanChoices> choices(options_.ms.size());
  std::vector<References> refs;
  refs.reserve(options_.ms.size());
  const M16PlanDevice& device = resources_.device;
  const std::uint32_t sms = device.sm_count;
  for (std::size_t i = 0; i < options_.ms.size(); ++i) {
    const std::uint32_t m = options_.ms[i];
    CaseResult& c = results[i];
    c.shape = shape;
    c.m = m;
    c.copies = d.copies;
    c.weight_bytes = fp8_weight_bytes(shape);
    c.choice = plan_entry_name(plan_m16_gemm(m, shape.n, shape.k, device), shape.k, sms);
    c.choice_pdl =
        plan_entry_name(plan_m16_gemm(m, shape.n, shape.k, device, {true}), shape.k, sms) + "+pdl";
    choices[i] = {c.choice, c.choice_pdl};
    refs.push_back(references(d, m));
  }
  std::vector<std::string_view> listed;
  for (const BenchEntry& e : options_.entries) listed.push_back(e.name);
  std::vector<std::string_view> tuning;
  for (const BenchEntry& e : tuning_entries()) tuning.push_back(e.name);
  // Plain entries and baselines of every m before any PDL entry (schedule.hpp).
  for (const TimingStep& step : layer_schedule(listed, tuning, choices, options_.baselines)) {
    CaseResult& c = results[step.m_index];
    const std::size_t i = step.m_index;
    switch (step.what) {
      case TimingStep::What::listed:
        c.entries.push_back(run_entry(d, options_.entries[step.index], c.m, refs[i]));
        break;
      case TimingStep::What::tuning:
        c.entries.push_back(run_entry(d, tuning_entries()[step.index], c.m, refs[i]));
        break;
      case TimingStep::What::baselines:
        c.baselines.push_back(bf16_baseline(d, c.m));
        c.baselines.push_back(fp8_baseline(d, c.m));
        break;
    }
  }
  for (CaseResult& c : results) {
    order_as_listed(c.entries);
    c.best = fastest(c.entries, false);
    c.best_pdl = fastest(c.entries, true);
  }
  return results;
}

void Runner::order_as_listed(std::vector<EntryResult>& entries) const {
  const auto position = [&](const EntryResult& r) {
    const auto it = std::find_if(options_.entries.begin(), options_.entries.end(),
                                 [&](const BenchEntry& e) { return e.name == r.entry; });
    return it - options_.entries.begin();  // a tuning entry the plan chose: after the list
  };
  std::stable_sort(entries.begin(), entries.end(),
                   [&](const EntryResult& a, const EntryResult& b) {
                     return position(a) < position(b);
                   });
}

KernelHandle Runner::kernel_with_defines(std::string_view entry) {
  if (options_.defines.empty()) return cache_.kernel(entry);
  KernelVariant variant = variant_for_entry(entry);
  for (const Define& d : options_.defines) variant.defines.push_back(d);
  return cache_.kernel(variant, entry);
}

Runner::References Runner::references(const ShapeData& d, std::uint32_t m) {
  const std::uint64_t per_copy = std::uint64_t{m} * d.shape.n;
  References refs{DeviceBuffer(gpu_, d.copies * per_copy * 2), {}, {}};
  poison(refs.all.get(), d.copies * per_copy);
  const KernelHandle gemv = cache_.kernel("w8a16_gemv_batch16");
  for (std::uint32_t c = 0; c < d.copies; ++c) {
    w8a16_gemv_batch16(gpu_, gemv, d.x.get(), d.weight(c), d.scale(c),
                       refs.all.get() + c * per_copy * 2, m, d.shape.n, d.shape.k,
                       stream_.handle());
  }
  stream_.synchronize();
  const auto of_copy = [&](std::uint32_t copy) {
    std::vector<std::uint16_t> ref(per_copy);
    gpu_.download(ref.data(), refs.all.get() + copy * per_copy * 2, per_copy * 2);
    return ref;
  };
  refs.first = of_copy(0);
  refs.last = of_copy(d.copies - 1);
  return refs;
}

void Runner::launch_entry(const BenchEntry& entry, KernelHandle kernel, const ShapeData& d,
                          std::uint32_t copy, std::uint32_t m, DevicePtr out) {
  if (entry.launch_with != nullptr) {
    entry.launch_with(gpu_, kernel, d.x.get(), d.weight(copy), d.scale(copy), out, m,
                      d.shape.n, d.shape.k, resources_, stream_.handle());
  } else {
    entry.launch(gpu_, kernel, d.x.get(), d.weight(copy), d.scale(copy), out, m, d.shape.n,
                 d.shape.k, stream_.handle());
  }
}

BudgetReport Runner::check_every_launch(const ShapeData& d, const BenchEntry& entry,
                                        KernelHandle kernel, std::uint32_t m,
                                        const DeviceBuffer& refs, std::string& detail) {
  // The detail of an earlier check (a run of --time-wrong) is kept, this one's added.
  const std::uint32_t n = d.shape.n;
  const std::uint64_t block = std::uint64_t{kMaxRows} * n;
  poison(d.out_all.get(), d.copies * block);
  {
    const Graph graph = capture(stream_, [&] {
      for (std::uint32_t c = 0; c < d.copies; ++c) {
        launch_entry(entry, kernel, d, c, m, d.out_all.get() + c * block * 2);
      }
    });
    const GraphExec exec(graph);
    exec.launch(stream_);
  }
  // The counters start at {0, ~0}: failures, lowest failing index.
  fill_u16(cache_, d.check_result.get(), 4, 0, stream_.handle());
  fill_u16(cache_, d.check_result.get() + 8, 4, 0xFFFF, stream_.handle());
  KernelLaunch(gpu_, check_->kernel("check_outputs"))
      .grid({kMaxRows, d.copies, 1}).block({256, 1, 1})
      .arg_ptr(d.out_all.get()).arg_ptr(refs.get()).arg_u32(m).arg_u32(n).arg_u32(d.shape.k)
      .arg_ptr(d.check_result.get())
      .launch(stream_.handle());
  stream_.synchronize();
  std::uint64_t result[2] = {};
  gpu_.download(result, d.check_result.get(), sizeof(result));
  BudgetReport check;
  check.checked = d.copies * block;
  check.failures = result[0];
  if (check.failures != 0) {
    const std::uint64_t at = result[1];
    const auto copy = static_cast<std::uint32_t>(at / block);
    const auto row = static_cast<std::uint32_t>(at % block / n);
    std::uint16_t got = 0;
    std::uint16_t want = kPoison;
    gpu_.download(&got, d.out_all.get() + at * 2, 2);
    if (row < m) {
      gpu_.download(&want, refs.get() + ((std::uint64_t{copy} * m + row) * n + at % n) * 2, 2);
    }
    detail += fmt::format(
        "{}every launch of the graph, each into its own outputs: {} of {} outputs wrong; "
        "first: launch {} row {} col {}: got {} (0x{:04x}), {} {} (0x{:04x})",
        detail.empty() ? "" : "; ", check.failures, check.checked, copy, row, at % n,
        bf16_to_float(got), got, row < m ? "reference" : "left poisoned: want",
        bf16_to_float(want), want);
  }
  return check;
}

BudgetReport Runner::check_output(const ShapeData& d, std::uint32_t m,
                                  const std::vector<std::uint16_t>& ref, std::string& detail,
                                  const char* when) {
  const std::uint32_t n = d.shape.n;
  const std::vector<std::uint16_t> all = download(d.out);
  const auto got = OutputBlock::rows_of(all);
  BudgetReport check =
      check_against_reference(got.first(std::uint64_t{m} * n), ref, m, n, d.shape.k);
  const std::uint64_t past_m = written(got.subspan(std::uint64_t{m} * n));
  const std::uint64_t stray = OutputBlock::guards_written(all);
  if (!check.ok()) {
    detail = fmt::format("{}: {} of {} outputs outside the budget; first: {}", when,
                         check.failures, check.checked, check.first_failure);
  } else if (past_m + stray != 0) {
    detail = fmt::format(
        "{}: {} outputs written in rows m..15 and {} outside the output block, which it "
        "must not touch", when, past_m, stray);
    check.failures += past_m + stray;
  }
  return check;
}

Timing Runner::time_on_layer(const ShapeData& d, std::uint32_t m, std::string_view what,
                             std::uint32_t copies,
                             const std::function<void(std::uint32_t)>& launch) {
  logger()->debug("bench: {} m={}: timing {} over {} copies", d.shape.label(), m, what, copies);
  // The first graph timed on a layer, after its set-up, read up to 5 % slow on small
  // layers when timed once (docs/performance.md, item 166): it is timed twice, the first
  // time discarded.
  if (!layer_warm_ && options_.warm_ms == 0) {
    (void)time_graph(stream_, copies, options_.replays, launch);
  }
  layer_warm_ = true;
  return time_graph(stream_, copies, options_.replays, launch, options_.warm_ms);
}

EntryResult Runner::run_entry(const ShapeData& d, const BenchEntry& entry, std::uint32_t m,
                              const References& refs) {
  EntryResult r = run_entry_once(d, entry, m, refs);
  if (r.status != Status::ok) {
    // After an error the context may be gone; then this throws, as the next entry would.
    gpu_.fill_bytes(workspace_.get(), 0, resources_.workspace.bytes);
    gpu_.synchronize();
  }
  return r;
}

EntryResult Runner::run_entry_once(const ShapeData& d, const BenchEntry& entry,
                                   std::uint32_t m, const References& refs) {
  EntryResult r;
  r.entry = std::string(entry.name);
  try {
    const KernelHandle kernel = kernel_with_defines(entry.kernel);
    poison(d.out);
    launch_entry(entry, kernel, d, 0, m, d.out.rows());
    stream_.synchronize();
    r.check = check_output(d, m, refs.first, r.detail, "the check launch (copy 0)");
    if (!r.check.ok()) {
      r.status = Status::wrong;
      if (!options_.time_wrong) return r;
    }
    poison(d.out);
    r.timing = time_on_layer(d, m, entry.name, d.copies, [&](std::uint32_t c) {
      launch_entry(entry, kernel, d, c, m, d.out.rows());
    });
    stream_.synchronize();
    // What was timed is checked too: the outputs of the graph's last launch (the last
    // copy), as the launches ran back to back (with PDL, overlapping).
    if (r.status == Status::ok) {
      r.check.merge(check_output(d, m, refs.last, r.detail, "the timed graph's last launch"));
    }
    if (timeline_) {
      timeline_->take(gpu_, workspace_.get(), resources_.workspace.bytes, resources_.device.sm_count,
                      d.shape.label(), m, entry.name);
    }
    // The timed graph's launches all write one output block, so only the last one's
    // outputs can be read back; the same launches again, each into a block of its own,
    // have every one checked (after the timeline, whose records they would overwrite).
    r.check.merge(check_every_launch(d, entry, kernel, m, refs.all, r.detail));
    if (!r.check.ok()) r.status = Status::wrong;
  } catch (const Error& e) {
    r.status = Status::error;
    r.detail = e.what();
    // A fault that killed the context makes every later result meaningless: stop here.
    gpu_.synchronize();
  }
  return r;
}

BaselineResult Runner::bf16_baseline(const ShapeData& d, std::uint32_t m) {
  BaselineResult r;
  r.name = "cublas_bf16";
  r.rows = m;
  r.copies = d.bf16_copies;
  r.weight_bytes = d.nk * 2;
  if (!cublas_) {
    r.error = cublas_error_;
    return r;
  }
  const std::uint32_t n = d.shape.n;
  const std::uint32_t k = d.shape.k;
  try {
    // An uncaptured call first: cuBLAS picks and loads its kernel outside the capture.
    poison(d.out_baseline);
    cublas_->bf16_gemm(d.x.get(), d.bf16_weight(0), d.out_baseline.rows(), m, n, k);
    stream_.synchronize();
    check_baseline_output(d, m,
                          baseline_reference(d, "reference_bf16_gemm", d.x.get(),
                                             d.bf16_weight(0), DevicePtr{}, DevicePtr{}, m),
                          r.name);
    r.timing = time_on_layer(d, m, r.name, d.bf16_copies, [&](std::uint32_t c) {
      cublas_->bf16_gemm(d.x.get(), d.bf16_weight(c), d.out_baseline.rows(), m, n, k);
    });
    r.ok = true;
  } catch (const Error& e) {
    r.error = e.what();
    gpu_.synchronize();
  }
  return r;
}

BaselineResult Runner::fp8_baseline(const ShapeData& d, std::uint32_t m) {
  BaselineResult r;
  r.name = "cublaslt_fp8";
  r.rows = m;
  r.copies = d.copies;
  r.weight_bytes = d.nk;  // the same FP8 weights; one per-tensor scale instead of blocks
  if (!cublas_) {
    r.error = cublas_error_;
    return r;
  }
  const std::uint32_t n = d.shape.n;
  const std::uint32_t k = d.shape.k;
  auto planned = [&](std::uint32_t rows) {
    auto g = cublas_->plan_fp8(rows, n, k);
    poison(d.out_baseline);
    g->enqueue(d.x_fp8.get(), d.weight(0), d.out_baseline.rows());
    stream_.synchronize();
    check_baseline_output(d, g->rows(),
                          baseline_reference(d, "reference_fp8_gemm", d.x_fp8.get(),
                                             d.weight(0), g->weight_scale(),
                                             g->activation_scale(), g->rows()),
                          r.name);
    return g;
  };
  try {
    std::unique_ptr<Fp8Gemm> gemm;
    try {
      gemm = planned(m);
    } catch (const Error&) {
      // cuBLASLt's FP8 kernels may want the token dimension padded to 16; a user would
      // pad, so the baseline does too and says so (rows).
      if (m == kMaxRows) throw;
      gpu_.synchronize();
      gemm = planned(kMaxRows);
    }
    r.rows = gemm->rows();
    r.timing = time_on_layer(d, m, r.name, d.copies, [&](std::uint32_t c) {
      gemm->enqueue(d.x_fp8.get(), d.weight(c), d.out_baseline.rows());
    });
    r.ok = true;
  } catch (const Error& e) {
    r.error = e.what();
    gpu_.synchronize();
  }
  return r;
}

}  // namespace metrale::bench
