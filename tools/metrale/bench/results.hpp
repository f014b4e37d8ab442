// Everything one benchmark run measured, as the table and the JSON report it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "metrale/bench/ceiling.hpp"
#include "metrale/bench/graph_timer.hpp"
#include "metrale/bench/shapes.hpp"
#include "metrale/cuda_backend.hpp"
#include "metrale/oracle.hpp"

namespace metrale::bench {

enum class Status { ok, wrong, error };
const char* status_name(Status s);  // "ok", "WRONG", "ERROR"

struct EntryResult {
  std::string entry;
  Status status = Status::ok;
  std::string detail;   // why it is WRONG or ERROR
  BudgetReport check;   // against w8a16_gemv_batch16 with within_m16_tc_budget
  Timing timing;        // only when the check passed
};

struct BaselineResult {
  std::string name;     // "cublas_bf16" or "cublaslt_fp8"
  bool ok = false;
  std::string error;
  std::uint32_t rows = 0;          // activation rows multiplied (FP8 may pad m to 16)
  std::uint32_t copies = 0;
  std::uint64_t weight_bytes = 0;  // weight bytes it streams per launch
  Timing timing;
};

struct CaseResult {
  Shape shape;
  std::uint32_t m = 0;
  std::uint32_t copies = 0;
  std::uint64_t weight_bytes = 0;  // FP8 weights + FP32 block scales
  std::vector<EntryResult> entries;
  std::vector<BaselineResult> baselines;  // empty with --no-baselines
  std::string choice;      // the entry plan_m16_gemm picks for this shape, as reported
  std::string choice_pdl;  // its pick for callers launching with PDL (a "+pdl" entry)
  std::string best;        // the fastest correct entry measured without PDL
  std::string best_pdl;    // the fastest correct "+pdl" entry measured
};

struct LaunchCost {
  std::string entry;
  double median_ns = 0.0;  // per launcher call
  double min_ns = 0.0;
  double max_ns = 0.0;
  std::uint64_t calls = 0;
  std::uint32_t batch = 0;
  double library_median_ns = 0.0;  // the same calls into a backend that launches nothing
  double driver_median_ns = 0.0;   // an empty kernel with the same parameters, launched
                                   // straight through the backend: the driver's floor
  double driver_no_args_median_ns = 0.0;  // the same for an empty kernel of no parameters
  // The launcher calls and the empty kernel again, each batch queued behind a kernel that
  // keeps the GPU busy longer than the batch takes: the host running ahead of the GPU.
  double busy_median_ns = 0.0;
  double busy_driver_median_ns = 0.0;
  // w8a16_gemm_m16_streamk, whose launcher also encodes two tensor maps per call: its
  // call, its library part (maps packed, not encoded) and one encode by the driver.
  double streamk_median_ns = 0.0;
  double streamk_library_median_ns = 0.0;
  double tensor_map_median_ns = 0.0;
  // w8a16_gemm_m16_auto on the same problem (the entry its plan picks there): its call and
  // its library part (the plan, the kernel lookup, the guards and the argument packing).
  std::string auto_entry;
  double auto_median_ns = 0.0;
  double auto_library_median_ns = 0.0;
};

// read_ceiling's kernel on one layer's bytes per launch (measure_size_ceiling): what pure
// reading costs per launch at that size, timed as the entries are.
struct SizeCeiling {
  std::uint32_t n = 0, k = 0;
  std::uint64_t bytes = 0;
  std::uint32_t copies = 0;
  Timing timing;
};

struct CompileTime {
  std::string module;
  double ms = 0.0;
  std::uint64_t image_bytes = 0;
};

struct BenchRun {
  DeviceInfo device;
  int driver_version = 0;
  std::string nvrtc_version;
  std::string commit;  // empty when unknown
  std::string date;    // UTC, ISO 8601
  std::uint32_t replays = 0;
  std::uint64_t min_bytes = 0;
  std::uint32_t warm_ms = 0;  // wall time each entry's and baseline's graph is replayed first
  bool baselines = true;
  double wall_s = 0.0;  // the run's wall time: compiles, ceilings, every case
  Ceiling ceiling;
  GraphGaps graph_gaps;
  LaunchCost launch_cost;
  std::vector<CompileTime> compiles;
  std::vector<SizeCeiling> size_ceilings;  // one per shape
  std::vector<CaseResult> cases;

  std::uint32_t count(Status s) const;
  const SizeCeiling* size_ceiling(std::uint32_t n, std::uint32_t k) const;  // or nullptr
};

}  // namespace metrale::bench
