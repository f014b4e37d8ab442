#include "metrale/bench/cublas_baselines.hpp"

#include <cuda_runtime_api.h>

#include <array>

#include "metrale/error.hpp"

namespace metrale::bench {
namespace {

// Enough for every cuBLASLt FP8 and cuBLAS BF16 kernel at these shapes; fixed so that
// nothing is allocated while a graph is being captured.
constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;

// Per-tensor scales of the FP8 baseline: the weights' typical block scale and the
// activation scale that maps the E4M3 range onto [-1, 1]. They only set the output's
// magnitude; the time does not depend on them.
constexpr std::array<float, 2> kFp8Scales = {1.0f / 256.0f, 1.0f / 448.0f};

void* as_void(DevicePtr p) { return reinterpret_cast<void*>(p.address); }

template <typename T>
void set_desc(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const T& value,
              const char* what) {
  const cublasStatus_t s = cublasLtMatmulDescSetAttribute(desc, attr, &value, sizeof(value));
  if (s != CUBLAS_STATUS_SUCCESS) {
    fail("cublasLtMatmulDescSetAttribute({}) failed: {} ({})", what, cublasGetStatusName(s),
         cublasGetStatusString(s));
  }
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
  check_cublas(cublasCreate(blas_.out()), "cublasCreate");
  check_cublas(cublasLtCreate(lt_.out()), "cublasLtCreate");
  workspace_ = DeviceBuffer(gpu, kWorkspaceBytes);
  fp8_scales_ = DeviceBuffer(gpu, sizeof(kFp8Scales));
  gpu.upload(fp8_scales_.get(), kFp8Scales.data(), sizeof(kFp8Scales));
  // A pageable upload may still be in flight when it returns, and the benchmark's stream
  // does not wait for the legacy stream.
  gpu.synchronize();
  // cublasSetStream resets the workspace to cuBLAS's own pool, so the order matters.
  check_cublas(cublasSetStream(blas_.get(), stream_), "cublasSetStream");
  check_cublas(cublasSetWorkspace(blas_.get(), as_void(workspace_.get()), kWorkspaceBytes),
               "cublasSetWorkspace");
}

CublasBaselines::~CublasBaselines() = default;

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

std::unique_ptr<Fp8Gemm> CublasBaselines::plan_fp8(std::uint32_t rows, std::uint32_t n,
                                                   std::uint32_t k) const {
  std::unique_ptr<Fp8Gemm> g(new Fp8Gemm());
  g->lt_ = lt_.get();
  g->stream_ = stream_;
  g->workspace_ = workspace_.get();
  g->workspace_bytes_ = kWorkspaceBytes;
  g->scales_ = fp8_scales_.get();
  g->rows_ = rows;

  check_cublas(cublasLtMatmulDescCreate(g->desc_.out(), CUBLAS_COMPUTE_32F, CUDA_R_32F),
               "cublasLtMatmulDescCreate");
  set_desc(g->desc_.get(), CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T, "TRANSA");
  set_desc(g->desc_.get(), CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N, "TRANSB");
  const void* a_scale = as_void(g->scales_);
  const void* b_scale = as_void(g->scales_ + sizeof(float));
  set_desc(g->desc_.get(), CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, a_scale, "A_SCALE_POINTER");
  set_desc(g->desc_.get(), CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, b_scale, "B_SCALE_POINTER");

  // A: the weights, K x N column-major (= [N, K] row-major), transposed by the op.
  check_cublas(cublasLtMatrixLayoutCreate(g->a_.out(), CUDA_R_8F_E4M3, k, n, k),
               "cublasLtMatrixLayoutCreate(A, E4M3)");
  // B: the activations, K x rows column-major (= [rows, K] row-major).
  check_cublas(cublasLtMatrixLayoutCreate(g->b_.out(), CUDA_R_8F_E4M3, k, rows, k),
               "cublasLtMatrixLayoutCreate(B, E4M3)");
  // C = D: N x rows column-major (= [rows, N] row-major), BF16 (C must match D).
  check_cublas(cublasLtMatrixLayoutCreate(g->d_.out(), CUDA_R_16BF, n, rows, n),
               "cublasLtMatrixLayoutCreate(D, BF16)");

  LtPreference pref;
  check_cublas(cublasLtMatmulPreferenceCreate(pref.out()), "cublasLtMatmulPreferenceCreate");
  const std::size_t ws = kWorkspaceBytes;
  check_cublas(cublasLtMatmulPreferenceSetAttribute(
                   pref.get(), CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)),
               "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)");
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(
      lt_.get(), g->desc_.get(), g->a_.get(), g->b_.get(), g->d_.get(), g->d_.get(),
      pref.get(), 1, &result, &found);
  if (s != CUBLAS_STATUS_SUCCESS) {
    fail("cublasLtMatmulAlgoGetHeuristic (FP8 E4M3 TN, N={} K={} rows={}) failed on {}: {} ({})",
         n, k, rows, gpu_.info().name, cublasGetStatusName(s), cublasGetStatusString(s));
  }
  if (found == 0 || result.state != CUBLAS_STATUS_SUCCESS) {
    fail("cuBLASLt offers no FP8 E4M3 TN algorithm for N={} K={} rows={} on {}", n, k, rows,
         gpu_.info().name);
  }
  g->algo_ = result.algo;
  return g;
}

void Fp8Gemm::enqueue(DevicePtr x_fp8, DevicePtr w_fp8, DevicePtr out) const {
  const float alpha = 1.0f;
  const float beta = 0.0f;
  check_cublas(cublasLtMatmul(lt_, desc_.get(), &alpha, as_void(w_fp8), a_.get(),
                              as_void(x_fp8), b_.get(), &beta, as_void(out), d_.get(),
                              as_void(out), d_.get(), &algo_, as_void(workspace_),
                              workspace_bytes_, stream_),
               "cublasLtMatmul (FP8 E4M3 W8A8, BF16 out)");
}

}  // namespace metrale::bench
