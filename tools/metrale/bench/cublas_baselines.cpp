#include "metrale/bench/cublas_baselines.hpp"

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <deque>
#include <mutex>

#include "metrale/error.hpp"
#include "metrale/log.hpp"

namespace metrale::bench {
namespace {

// Enough for every cuBLASLt FP8 and cuBLAS BF16 kernel at these shapes; fixed so that
// nothing is allocated while a graph is being captured.
constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;

// Per-tensor scales of the FP8 baseline: the weights' typical block scale and the
// activation scale that maps the E4M3 range onto [-1, 1]. They only set the output's
// magnitude; the time does not depend on them.
constexpr float kWeightScale = 1.0f / 256.0f;
constexpr float kActivationScale = 1.0f / 448.0f;

// Each scale sits at the start of its own slot. cuBLASLt rejects scale pointers that are
// not 16-byte aligned (a second float packed at base + 4 makes cublasLtMatmul return
// CUBLAS_STATUS_NOT_SUPPORTED even though the heuristic accepted the descriptor);
// torch._scaled_mm passes two separately allocated tensors.
constexpr std::uint64_t kScaleSlot = 256;

// Heuristic candidates kept per plan: the first is what torch._scaled_mm would run; the
// others stand in if cublasLtMatmul rejects it.
constexpr int kMaxAlgos = 8;

// The alignment cuBLASLt assumes when not told otherwise, and the most it uses.
constexpr std::uint32_t kMaxAlign = 256;

void* as_void(DevicePtr p) { return reinterpret_cast<void*>(p.address); }

// The largest power of two (at most 256) that divides `v`; 256 for 0.
std::uint32_t alignment_of(std::uint64_t v) {
  if (v == 0) return kMaxAlign;
  const std::uint64_t low = v & (~v + 1);
  return low >= kMaxAlign ? kMaxAlign : static_cast<std::uint32_t>(low);
}

std::string pointer_text(DevicePtr p) {
  return fmt::format("{:#x} ({}-B aligned)", p.address, alignment_of(p.address));
}

template <typename T>
void set_desc(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const T& value,
              const char* what) {
  const cublasStatus_t s = cublasLtMatmulDescSetAttribute(desc, attr, &value, sizeof(value));
  if (s != CUBLAS_STATUS_SUCCESS) {
    fail("cublasLtMatmulDescSetAttribute({}) failed: {} ({})", what, cublasGetStatusName(s),
         cublasGetStatusString(s));
  }
}

template <typename T>
void set_pref(cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr,
              const T& value, const char* what) {
  const cublasStatus_t s =
      cublasLtMatmulPreferenceSetAttribute(pref, attr, &value, sizeof(value));
  if (s != CUBLAS_STATUS_SUCCESS) {
    fail("cublasLtMatmulPreferenceSetAttribute({}) failed: {} ({})", what,
         cublasGetStatusName(s), cublasGetStatusString(s));
  }
}

// cuBLASLt's error log, kept so that a failure message can say why cuBLASLt refused.
// Never destroyed: cuBLASLt may log while the process exits.
struct LtLog {
  std::mutex mutex;
  std::deque<std::string> lines;
  bool installed = false;
};

LtLog& lt_log() {
  static LtLog* const log = new LtLog();
  return *log;
}

void lt_log_callback(int level, const char* function, const char* message) {
  LtLog& log = lt_log();
  const std::lock_guard<std::mutex> lock(log.mutex);
  if (log.lines.size() >= 16) log.lines.pop_front();
  log.lines.push_back(fmt::format("[level {}] {}: {}", level,
                                  function != nullptr ? function : "?",
                                  message != nullptr ? message : ""));
}

void lt_log_clear() {
  LtLog& log = lt_log();
  const std::lock_guard<std::mutex> lock(log.mutex);
  log.lines.clear();
}

// " cuBLASLt log: ..." with what cuBLASLt logged since the last clear, then clears it.
std::string lt_log_drain() {
  LtLog& log = lt_log();
  const std::lock_guard<std::mutex> lock(log.mutex);
  if (!log.installed) return " (cuBLASLt's own log goes where CUBLASLT_LOG_* sends it)";
  if (log.lines.empty()) {
    return " (cuBLASLt logged no error; CUBLASLT_LOG_LEVEL=5 shows its full trace)";
  }
  std::string text = " cuBLASLt log:";
  for (const std::string& line : log.lines) text += " " + line + ";";
  log.lines.clear();
  return text;
}

bool env_set(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0';
}

}  // namespace

void check_cublas(cublasStatus_t status, const char* call) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  fail("{} failed: {} ({})", call, cublasGetStatusName(status), cublasGetStatusString(status));
}

CublasBaselines::CublasBaselines(const CudaBackend& gpu, const Stream& stream)
    : gpu_(gpu), stream_(stream.get()) {
  gpu.make_current();
  const cudaError_t e = cudaSetDevice(gpu.info().ordinal);
  if (e != cudaSuccess) {
    fail("cudaSetDevice({}) for the cuBLAS baselines failed: {} ({})", gpu.info().ordinal,
         cudaGetErrorName(e), cudaGetErrorString(e));
  }
  // A user who set cuBLASLt's own logging keeps it; otherwise its errors (mask 1) are
  // collected for the failure messages.
  if (!env_set("CUBLASLT_LOG_LEVEL") && !env_set("CUBLASLT_LOG_MASK") &&
      !env_set("CUBLASLT_LOG_FILE")) {
    if (cublasLtLoggerSetCallback(lt_log_callback) == CUBLAS_STATUS_SUCCESS &&
        cublasLtLoggerSetMask(1) == CUBLAS_STATUS_SUCCESS) {
      const std::lock_guard<std::mutex> lock(lt_log().mutex);
      lt_log().installed = true;
      lt_log_installed_ = true;
    }
  }
  check_cublas(cublasCreate(blas_.out()), "cublasCreate");
  check_cublas(cublasLtCreate(lt_.out()), "cublasLtCreate");
  workspace_ = DeviceBuffer(gpu, kWorkspaceBytes);
  fp8_scales_ = DeviceBuffer(gpu, 2 * kScaleSlot);
  gpu.upload(fp8_scales_.get(), &kWeightScale, sizeof(float));
  gpu.upload(fp8_scales_.get() + kScaleSlot, &kActivationScale, sizeof(float));
  // A pageable upload may still be in flight when it returns, and the benchmark's stream
  // does not wait for the legacy stream.
  gpu.synchronize();
  // cublasSetStream resets the workspace to cuBLAS's own pool, so the order matters.
  check_cublas(cublasSetStream(blas_.get(), stream_), "cublasSetStream");
  check_cublas(cublasSetWorkspace(blas_.get(), as_void(workspace_.get()), kWorkspaceBytes),
               "cublasSetWorkspace");
}

CublasBaselines::~CublasBaselines() {
  if (!lt_log_installed_) return;
  cublasLtLoggerSetMask(0);
  cublasLtLoggerSetCallback(nullptr);
  const std::lock_guard<std::mutex> lock(lt_log().mutex);
  lt_log().installed = false;
  lt_log().lines.clear();
}

void CublasBaselines::bf16_gemm(DevicePtr x, DevicePtr w, DevicePtr out, std::uint32_t m,
                                std::uint32_t n, std::uint32_t k) const {
  const float alpha = 1.0f;
  const float beta = 0.0f;
  const int in = static_cast<int>(n);
  const int im = static_cast<int>(m);
  const int ik = static_cast<int>(k);
  check_cublas(cublasGemmEx(blas_.get(), CUBLAS_OP_T, CUBLAS_OP_N, in, im, ik, &alpha,
                            as_void(w), CUDA_R_16BF, ik, as_void(x), CUDA_R_16BF, ik, &beta,
                            as_void(out), CUDA_R_16BF, in, CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT),
               "cublasGemmEx (BF16, FP32 compute)");
}

// The configuration torch._scaled_mm (aten/src/ATen/cuda/CUDABlas.cpp, scaled_gemm) builds
// for per-tensor scales: TN, E4M3 x E4M3, C = D = BF16 (C unused, beta = 0, D's pointer
// passed for both), CUBLAS_COMPUTE_32F, scale type CUDA_R_32F, A/B scale pointers to one
// device float each (SCALAR_32F mode), fast accumulation off, one heuristic query with
// MAX_WORKSPACE_BYTES equal to the workspace then passed to cublasLtMatmul.
std::unique_ptr<Fp8Gemm> CublasBaselines::plan_fp8(std::uint32_t rows, std::uint32_t n,
                                                   std::uint32_t k) const {
  std::unique_ptr<Fp8Gemm> g(new Fp8Gemm());
  g->lt_ = lt_.get();
  g->stream_ = stream_;
  g->workspace_ = workspace_.get();
  g->workspace_bytes_ = kWorkspaceBytes;
  g->a_scale_ = fp8_scales_.get();
  g->b_scale_ = fp8_scales_.get() + kScaleSlot;
  g->rows_ = rows;
  g->n_ = n;
  g->k_ = k;

  // cuBLAS's GEMM is m x n x k with m = N (the weights' rows), n = rows (tokens).
  const std::uint64_t lda = k;  // A: weights, K x N column-major = [N, K] row-major; op T
  const std::uint64_t ldb = k;  // B: activations, K x rows column-major = [rows, K]; op N
  const std::uint64_t ldd = n;  // C = D: N x rows column-major = [rows, N] row-major
  // Weight copies stacked back to back are only as aligned as one copy's size.
  g->align_a_ = alignment_of(std::uint64_t{n} * k);
  g->align_b_ = kMaxAlign;
  g->align_d_ = kMaxAlign;
  g->config_ = fmt::format(
      "transa=T transb=N m={} n={} k={} (weights N={} K={}, token rows={}); "
      "A=E4M3 {}x{} lda={}, B=E4M3 {}x{} ldb={}, C=D=BF16 {}x{} ldc=ldd={}; "
      "compute=CUBLAS_COMPUTE_32F scale=CUDA_R_32F; A/B scales: SCALAR_32F device floats; "
      "fast_accum=0; alignment assumed A={} B={} C=D={}; workspace={} B",
      n, rows, k, n, k, rows, k, n, lda, k, rows, ldb, n, rows, ldd, g->align_a_,
      g->align_b_, g->align_d_, kWorkspaceBytes);
  g->device_ = fmt::format("{} ({}), cuBLASLt {} built for cudart {}", gpu_.info().name,
                           gpu_.info().target(), cublasLtGetVersion(),
                           cublasLtGetCudartVersion());

  check_cublas(cublasLtMatmulDescCreate(g->desc_.out(), CUBLAS_COMPUTE_32F, CUDA_R_32F),
               "cublasLtMatmulDescCreate");
  const cublasOperation_t transa = CUBLAS_OP_T;
  const cublasOperation_t transb = CUBLAS_OP_N;
  set_desc(g->desc_.get(), CUBLASLT_MATMUL_DESC_TRANSA, transa, "TRANSA");
  set_desc(g->desc_.get(), CUBLASLT_MATMUL_DESC_TRANSB, transb, "TRANSB");
  const void* a_scale = as_void(g->a_scale_);
  const void* b_scale = as_void(g->b_scale_);
  set_desc(g->desc_.get(), CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, a_scale, "A_SCALE_POINTER");
  set_desc(g->desc_.get(), CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, b_scale, "B_SCALE_POINTER");
  const std::int8_t fast_accum = 0;
  set_desc(g->desc_.get(), CUBLASLT_MATMUL_DESC_FAST_ACCUM, fast_accum, "FAST_ACCUM");
#if CUBLAS_VERSION >= 120800
  const std::int32_t scale_mode = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
  set_desc(g->desc_.get(), CUBLASLT_MATMUL_DESC_A_SCALE_MODE, scale_mode, "A_SCALE_MODE");
  set_desc(g->desc_.get(), CUBLASLT_MATMUL_DESC_B_SCALE_MODE, scale_mode, "B_SCALE_MODE");
#endif

  check_cublas(cublasLtMatrixLayoutCreate(g->a_.out(), CUDA_R_8F_E4M3, k, n,
                                          static_cast<std::int64_t>(lda)),
               "cublasLtMatrixLayoutCreate(A, E4M3)");
  check_cublas(cublasLtMatrixLayoutCreate(g->b_.out(), CUDA_R_8F_E4M3, k, rows,
                                          static_cast<std::int64_t>(ldb)),
               "cublasLtMatrixLayoutCreate(B, E4M3)");
  // C must match D's type (BF16); the same layout and pointer serve both.
  check_cublas(cublasLtMatrixLayoutCreate(g->d_.out(), CUDA_R_16BF, n, rows,
                                          static_cast<std::int64_t>(ldd)),
               "cublasLtMatrixLayoutCreate(C = D, BF16)");

  LtPreference pref;
  check_cublas(cublasLtMatmulPreferenceCreate(pref.out()), "cublasLtMatmulPreferenceCreate");
  const std::uint64_t ws = kWorkspaceBytes;
  set_pref(pref.get(), CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, ws, "MAX_WORKSPACE_BYTES");
  set_pref(pref.get(), CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, g->align_a_,
           "MIN_ALIGNMENT_A_BYTES");
  set_pref(pref.get(), CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, g->align_b_,
           "MIN_ALIGNMENT_B_BYTES");
  set_pref(pref.get(), CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, g->align_d_,
           "MIN_ALIGNMENT_C_BYTES");
  set_pref(pref.get(), CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, g->align_d_,
           "MIN_ALIGNMENT_D_BYTES");

  std::vector<cublasLtMatmulHeuristicResult_t> results(kMaxAlgos);
  int found = 0;
  lt_log_clear();
  const cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(
      lt_.get(), g->desc_.get(), g->a_.get(), g->b_.get(), g->d_.get(), g->d_.get(),
      pref.get(), kMaxAlgos, results.data(), &found);
  if (s != CUBLAS_STATUS_SUCCESS) {
    fail("cublasLtMatmulAlgoGetHeuristic (FP8 E4M3 W8A8, BF16 out) rejected the "
         "configuration: {} ({}) [{}] on {}.{}",
         cublasGetStatusName(s), cublasGetStatusString(s), g->config_, g->device_,
         lt_log_drain());
  }
  if (found <= 0) {
    fail("cublasLtMatmulAlgoGetHeuristic (FP8 E4M3 W8A8, BF16 out) returned 0 algorithms "
         "(status SUCCESS) [{}] on {}.{}",
         g->config_, g->device_, lt_log_drain());
  }
  std::string states;
  for (int i = 0; i < found && i < kMaxAlgos; ++i) {
    const cublasLtMatmulHeuristicResult_t& r = results[static_cast<std::size_t>(i)];
    if (r.state == CUBLAS_STATUS_SUCCESS && r.workspaceSize <= kWorkspaceBytes) {
      g->algos_.push_back(r);
    } else {
      states += fmt::format(" #{}: {} (workspace {} B)", i + 1, cublasGetStatusName(r.state),
                            r.workspaceSize);
    }
  }
  if (g->algos_.empty()) {
    fail("cublasLtMatmulAlgoGetHeuristic (FP8 E4M3 W8A8, BF16 out) returned {} algorithms, "
         "none usable:{} [{}] on {}.{}",
         found, states, g->config_, g->device_, lt_log_drain());
  }
  return g;
}

std::string Fp8Gemm::describe_call(DevicePtr x_fp8, DevicePtr w_fp8, DevicePtr out) const {
  return fmt::format(
      "A (weights)={}, B (activations)={}, C=D (output)={}, A scale={}, B scale={}, "
      "workspace={} of {} B (algorithm needs {} B)",
      pointer_text(w_fp8), pointer_text(x_fp8), pointer_text(out), pointer_text(a_scale_),
      pointer_text(b_scale_), pointer_text(workspace_), workspace_bytes_,
      algos_[algo_].workspaceSize);
}

void Fp8Gemm::enqueue(DevicePtr x_fp8, DevicePtr w_fp8, DevicePtr out) const {
  if (w_fp8.address % align_a_ != 0 || x_fp8.address % align_b_ != 0 ||
      out.address % align_d_ != 0) {
    fail("cuBLASLt FP8 GEMM: a pointer is less aligned than the plan assumed [{}]; [{}]",
         config_, describe_call(x_fp8, w_fp8, out));
  }
  const float alpha = 1.0f;
  const float beta = 0.0f;
  std::string rejected;  // algorithms cublasLtMatmul refused before one ran
  for (;;) {
    if (!settled_) lt_log_clear();
    const cublasStatus_t s = cublasLtMatmul(
        lt_, desc_.get(), &alpha, as_void(w_fp8), a_.get(), as_void(x_fp8), b_.get(), &beta,
        as_void(out), d_.get(), as_void(out), d_.get(), &algos_[algo_].algo,
        as_void(workspace_), workspace_bytes_, stream_);
    if (s == CUBLAS_STATUS_SUCCESS) {
      if (!rejected.empty()) {
        logger()->warn(
            "cuBLASLt FP8 baseline [{}]: cublasLtMatmul refused the heuristic's first "
            "choice{}; timing algorithm {} of {}",
            config_, rejected, algo_ + 1, algos_.size());
      }
      settled_ = true;
      return;
    }
    if (!settled_ && s == CUBLAS_STATUS_NOT_SUPPORTED && algo_ + 1 < algos_.size()) {
      rejected += fmt::format(" (#{}:{})", algo_ + 1, lt_log_drain());
      ++algo_;
      continue;
    }
    fail("cublasLtMatmul (FP8 E4M3 W8A8, BF16 out) failed: {} ({}) with heuristic "
         "algorithm {} of {}{} [{}] [{}] on {}.{}",
         cublasGetStatusName(s), cublasGetStatusString(s), algo_ + 1, algos_.size(),
         settled_ ? " after it had run" : (algo_ > 0 ? ", every earlier one refused too" : ""),
         config_, describe_call(x_fp8, w_fp8, out), device_, lt_log_drain());
  }
}

}  // namespace metrale::bench
