// Per-shape measurement: the rotated weight copies, the oracle gate, the graph timing of
// each entry and the cuBLAS baselines on the same operands.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "metrale/bench/bench_module.hpp"
#include "metrale/bench/cublas_baselines.hpp"
#include "metrale/bench/entries.hpp"
#include "metrale/bench/graph_timer.hpp"
#include "metrale/bench/results.hpp"
#include "metrale/bench/timeline.hpp"
#include "metrale/cuda_backend.hpp"
#include "metrale/module_cache.hpp"

namespace metrale::bench {

struct RunOptions {
  std::vector<std::uint32_t> ms;
  std::vector<BenchEntry> entries;
  std::uint32_t replays = 7;
  // Wall time (ms) each entry's and baseline's graph is replayed before its timed
  // replays; 0: one warm-up replay (and the layer's first graph timed twice).
  std::uint32_t warm_ms = 0;
  std::uint64_t min_bytes = std::uint64_t{768} << 20;
  bool baselines = true;
  std::vector<Define> defines;  // extra defines for the timed entries' modules
  // Time an entry even when its check fails (still reported WRONG): for diagnostic
  // defines that leave out part of the work on purpose.
  bool time_wrong = false;
  // Where to write stream-K's per-CTA timeline records (METRALE_DIAG_TIMELINE), or empty.
  std::string timeline;
};

class Runner {
 public:
  Runner(const CudaBackend& gpu, ModuleCache& cache, const Stream& stream,
         const RunOptions& options);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // One CaseResult per m of the options, entries and baselines in option order, timed in
  // layer_schedule's (the plain entries and baselines of every m before any PDL entry).
  std::vector<CaseResult> run_shape(const Shape& shape);

  // Compile time of the baselines' operand kernels (0 without baselines).
  double prep_compile_ms() const { return prep_ ? prep_->compile_ms() : 0.0; }

 private:
  struct ShapeData;
  struct OutputBlock;
  struct References;
  void fill_fp8(DevicePtr p, std::uint64_t count, std::uint32_t seed);
  void fill_f32(DevicePtr p, std::uint64_t count, std::uint32_t seed, float lo, float hi);
  void fill_bf16(DevicePtr p, std::uint64_t count, std::uint32_t seed, float scale);
  void poison(DevicePtr p, std::uint64_t count);
  void poison(const OutputBlock& out);  // its rows and guards
  std::vector<std::uint16_t> download(const OutputBlock& out) const;  // rows and guards
  // The scalar reference's m x N outputs on every copy of the weights and scales.
  References references(const ShapeData& d, std::uint32_t m);
  // An entry's outputs, downloaded whole (16 rows and the guards around them), held to
  // `ref` in rows 0..m-1 and to the poison in the rows past m and in the guards; `when`
  // names the launch in the report.
  BudgetReport check_output(const ShapeData& d, std::uint32_t m,
                            const std::vector<std::uint16_t>& ref, std::string& detail,
                            const char* when);
  // The kernel of `entry` (a kernel entry name), built with the run's extra defines if any.
  KernelHandle kernel_with_defines(std::string_view entry);
  void launch_entry(const BenchEntry& entry, KernelHandle kernel, const ShapeData& d,
                    std::uint32_t copy, std::uint32_t m, DevicePtr out);
  // The timed graph's launches again, each into its own 16-row block, in one graph, every
  // block checked on the device (output_check.cu) against `refs` (References::all).
  BudgetReport check_every_launch(const ShapeData& d, const BenchEntry& entry,
                                  KernelHandle kernel, std::uint32_t m,
                                  const DeviceBuffer& refs, std::string& detail);
  // An entry at m, checked against `refs` (references() at m). After an entry that was not
  // ok the workspace is zeroed again: a wrong or failed launch may leave partials in it,
  // which the next entry would read as its own.
  EntryResult run_entry(const ShapeData& d, const BenchEntry& entry, std::uint32_t m,
                        const References& refs);
  EntryResult run_entry_once(const ShapeData& d, const BenchEntry& entry, std::uint32_t m,
                             const References& refs);
  // Back to the list's order, the tuning entries after it.
  void order_as_listed(std::vector<EntryResult>& entries) const;
  // time_graph, with one discarded timing first if nothing has been timed on the layer;
  // `what` at m is logged at debug level, so that the order of a run can be read back.
  Timing time_on_layer(const ShapeData& d, std::uint32_t m, std::string_view what,
                       std::uint32_t copies, const std::function<void(std::uint32_t)>& launch);
  BaselineResult bf16_baseline(const ShapeData& d, std::uint32_t m);
  BaselineResult fp8_baseline(const ShapeData& d, std::uint32_t m);
  // A baseline's product on its own operands, in FP32 (baseline_prep.cu's `kernel`);
  // the FP8 one takes the two per-tensor scales, the BF16 one none (null pointers).
  std::vector<float> baseline_reference(const ShapeData& d, std::string_view kernel,
                                        DevicePtr x, DevicePtr w, DevicePtr w_scale,
                                        DevicePtr x_scale, std::uint32_t rows);
  void check_baseline_output(const ShapeData& d, std::uint32_t rows,
                             const std::vector<float>& ref, std::string_view name) const;
  void check_memory(const Shape& shape, std::uint64_t needed) const;

  const CudaBackend& gpu_;
  ModuleCache& cache_;
  const Stream& stream_;
  RunOptions options_;
  std::uint32_t fill_grid_ = 0;
  std::unique_ptr<BenchModule> prep_;
  std::unique_ptr<BenchModule> check_;  // output_check.cu
  std::unique_ptr<CublasBaselines> cublas_;
  std::string cublas_error_;  // why the baselines could not be set up, if they could not
  DeviceBuffer workspace_;     // lent to the entries through resources_
  EntryResources resources_;
  std::unique_ptr<TimelineWriter> timeline_;
  bool layer_warm_ = false;  // a graph has been timed on the current layer
};

}  // namespace metrale::bench
