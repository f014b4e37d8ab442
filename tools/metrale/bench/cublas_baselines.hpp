// The baselines a user would pick instead of the library, timed by the same graph
// method: cuBLAS BF16 GEMM on dequantized weights, and cuBLASLt FP8 W8A8 with
// per-tensor scales (what torch._scaled_mm runs). cuBLAS links to the CLI only.
//
// Layout: the library computes out[m, N] = x[m, K] . W[N, K]^T with everything
// row-major. In cuBLAS's column-major terms that is out^T (N x m, ld N) =
// op(W) (N x K) . x^T (K x m), with W stored as a K x N column-major matrix (ld K) and
// op = transpose: the "TN" layout, which cuBLASLt requires for FP8.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "metrale/bench/graph_timer.hpp"
#include "metrale/cuda_backend.hpp"

namespace metrale::bench {

// Owns one cuBLAS/cuBLASLt object; destroys it on every path.
template <typename T, cublasStatus_t (*Destroy)(T)>
class CublasOwned {
 public:
  CublasOwned() = default;
  ~CublasOwned() {
    if (h_ != nullptr) Destroy(h_);
  }
  CublasOwned(const CublasOwned&) = delete;
  CublasOwned& operator=(const CublasOwned&) = delete;
  T get() const { return h_; }
  T* out() { return &h_; }

 private:
  T h_ = nullptr;
};

using LtDesc = CublasOwned<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy>;
using LtLayout = CublasOwned<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy>;
using LtPreference = CublasOwned<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy>;

// Throws Error naming `call` and the status unless CUBLAS_STATUS_SUCCESS.
void check_cublas(cublasStatus_t status, const char* call);

// One planned cuBLASLt FP8 W8A8 GEMM: E4M3 weights [N, K] and activations [rows, K],
// one FP32 scale each (device pointers), FP32 compute, BF16 output [rows, N].
class Fp8Gemm {
 public:
  std::uint32_t rows() const { return rows_; }
  // The per-tensor scales it multiplies by (device floats), for a reference to use.
  DevicePtr weight_scale() const { return a_scale_; }
  DevicePtr activation_scale() const { return b_scale_; }

  // Enqueues the GEMM. Until one call has succeeded, an algorithm that cublasLtMatmul
  // rejects with CUBLAS_STATUS_NOT_SUPPORTED is replaced by the heuristic's next one
  // (with a warning); after that the algorithm is fixed. Throws Error describing the
  // whole configuration, the pointers and cuBLASLt's own log when the call fails.
  void enqueue(DevicePtr x_fp8, DevicePtr w_fp8, DevicePtr out) const;

 private:
  friend class CublasBaselines;
  Fp8Gemm() = default;
  std::string describe_call(DevicePtr x_fp8, DevicePtr w_fp8, DevicePtr out) const;

  cublasLtHandle_t lt_ = nullptr;
  cudaStream_t stream_ = nullptr;
  DevicePtr workspace_{};
  std::size_t workspace_bytes_ = 0;
  DevicePtr a_scale_{};  // weight scale
  DevicePtr b_scale_{};  // activation scale
  std::uint32_t rows_ = 0;
  std::uint32_t n_ = 0;
  std::uint32_t k_ = 0;
  // The pointer alignments the heuristic was told to assume (bytes).
  std::uint32_t align_a_ = 0, align_b_ = 0, align_d_ = 0;
  std::string config_;  // transposes, dims, leading dims, types: for messages
  std::string device_;  // GPU and cuBLASLt version: for messages
  LtDesc desc_;
  LtLayout a_, b_, d_;
  std::vector<cublasLtMatmulHeuristicResult_t> algos_;  // best first
  mutable std::size_t algo_ = 0;                         // the one in use
  mutable bool settled_ = false;                         // algo_ has run once
};

class CublasBaselines {
 public:
  // Selects the device for the CUDA runtime (cuBLAS runs on it), creates the handles,
  // and binds them to `stream` with a fixed workspace (no allocation under capture).
  // Unless CUBLASLT_LOG_LEVEL/_MASK/_FILE are set, routes cuBLASLt's error log into the
  // FP8 baseline's failure messages.
  CublasBaselines(const CudaBackend& gpu, const Stream& stream);
  ~CublasBaselines();
  CublasBaselines(const CublasBaselines&) = delete;
  CublasBaselines& operator=(const CublasBaselines&) = delete;

  // out[m, N] = x[m, K] . w[N, K]^T, BF16 operands, FP32 compute (cublasGemmEx).
  void bf16_gemm(DevicePtr x, DevicePtr w, DevicePtr out, std::uint32_t m, std::uint32_t n,
                 std::uint32_t k) const;

  // Plans an FP8 GEMM for `rows` activation rows; throws Error when cuBLASLt offers no
  // algorithm for it. The weights passed to enqueue may be any of several [n, k]
  // matrices stored back to back (so aligned to n * k bytes, up to 256); activations
  // and output must start 256-byte aligned.
  std::unique_ptr<Fp8Gemm> plan_fp8(std::uint32_t rows, std::uint32_t n, std::uint32_t k) const;

 private:
  const CudaBackend& gpu_;
  cudaStream_t stream_ = nullptr;
  bool lt_log_installed_ = false;
  // Declared before the handles so that the handles are destroyed first.
  DeviceBuffer workspace_;
  DeviceBuffer fp8_scales_;
  CublasOwned<cublasHandle_t, cublasDestroy_v2> blas_;
  CublasOwned<cublasLtHandle_t, cublasLtDestroy> lt_;
};

}  // namespace metrale::bench
