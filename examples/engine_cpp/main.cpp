// An engine's use of the library through its C++ API: one KernelService per GPU, warmed
// up before serving, then the dense FFN for 1..32 rows, the strided QKV projection and two
// attention projections through the automatic choice, each checked against the scalar
// reference kernel within the tensor-core budget.
//
//   engine_cpp [DEVICE]     exit 0: checks passed, 1: a check or a call failed,
//                           2: a bad argument (the usage is printed),
//                           77: no CUDA device (the reason is printed)
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <metrale/error.hpp>
#include <metrale/host_reference.hpp>
#include <metrale/kernel_launch.hpp>
#include <metrale/kernel_service.hpp>
#include <metrale/oracle.hpp>
#include <metrale/w8a16_gemm_m16_auto.hpp>
#include <metrale/w8a16_gemv_batch16.hpp>
#include <string>
#include <vector>

namespace {

constexpr int kNoDevice = 77;
constexpr int kBadArgument = 2;

using metrale::DeviceBuffer;
using metrale::DevicePtr;
using metrale::KernelService;

// Operand fills with the library's own fill kernels (kernel_sources/fill_random.cu).
class Filler {
 public:
  explicit Filler(KernelService& service) : service_(service) {}

  void bf16(DevicePtr out, std::uint32_t count, std::uint32_t seed, float scale) {
    start("fill_random_bf16", count)
        .arg_ptr(out)
        .arg_u32(count)
        .arg_u32(seed)
        .arg_f32(scale)
        .launch(0);
  }
  void fp8(DevicePtr out, std::uint32_t count, std::uint32_t seed) {
    // 0x7E: every finite E4M3 magnitude.
    start("fill_random_fp8", count)
        .arg_ptr(out)
        .arg_u32(count)
        .arg_u32(seed)
        .arg_u32(0x7E)
        .launch(0);
  }
  void f32(DevicePtr out, std::uint32_t count, std::uint32_t seed, float lo, float hi) {
    start("fill_random_f32", count)
        .arg_ptr(out)
        .arg_u32(count)
        .arg_u32(seed)
        .arg_f32(lo)
        .arg_f32(hi)
        .launch(0);
  }
  // BF16 NaN everywhere: an output the kernel fails to write can never pass the check.
  void poison(DevicePtr out, std::uint32_t count) {
    start("fill_u16", count).arg_ptr(out).arg_u32(count).arg_u32(0xFFFF).launch(0);
  }

 private:
  metrale::KernelLaunch start(const char* entry, std::uint32_t count) {
    metrale::KernelLaunch launch(service_.gpu(), service_.kernel(entry));
    launch.grid({std::min(metrale::div_ceil(count, 256), 1024u), 1, 1}).block({256, 1, 1});
    return launch;
  }
  KernelService& service_;
};

// One FP8 weight [n, k] with its block scales [ceil(n/128), k/128].
struct Weight {
  Weight(const metrale::CudaBackend& gpu, Filler& fill, std::uint32_t n_, std::uint32_t k_,
         std::uint32_t seed)
      : n(n_),
        k(k_),
        codes(gpu, std::size_t{n_} * k_),
        scales(gpu, std::size_t{metrale::div_ceil(n_, 128)} * (k_ / 128) * 4) {
    fill.fp8(codes.get(), n * k, seed);
    fill.f32(scales.get(), metrale::div_ceil(n, 128) * (k / 128), seed + 1, 1.0f / 512, 1.0f / 128);
  }
  std::uint32_t n, k;
  DeviceBuffer codes, scales;
};

// Outputs checked and the worst ULP distance seen, over one kind of call.
struct Tally {
  std::uint64_t checked = 0;
  std::uint64_t failures = 0;
  std::uint32_t max_ulp = 0;
  std::string first_failure;
};

std::vector<std::uint16_t> download(const metrale::CudaBackend& gpu, DevicePtr p,
                                    std::size_t count) {
  std::vector<std::uint16_t> host(count);
  gpu.download(host.data(), p, count * 2);
  return host;
}

// Compares `cols` columns from `first_col` of `rows` rows (pitch `pitch` elements).
void check(Tally& t, const std::vector<std::uint16_t>& got, const std::vector<std::uint16_t>& ref,
           std::uint32_t rows, std::uint32_t pitch, std::uint32_t first_col, std::uint32_t cols,
           std::uint32_t k, const char* what) {
  for (std::uint32_t r = 0; r < rows; ++r) {
    const std::size_t base = std::size_t{r} * pitch + first_col;
    double sum_sq = 0.0;
    for (std::uint32_t c = 0; c < cols; ++c) {
      const double v = metrale::bf16_to_float(ref[base + c]);
      sum_sq += v * v;
    }
    const double rms = std::sqrt(sum_sq / cols);
    for (std::uint32_t c = 0; c < cols; ++c) {
      const float g = metrale::bf16_to_float(got[base + c]);
      const float e = metrale::bf16_to_float(ref[base + c]);
      ++t.checked;
      if (!metrale::within_m16_tc_budget(g, e, k, rms)) {
        if (t.failures++ == 0) {
          t.first_failure = std::string(what) + ": row " + std::to_string(r) + " column " +
                            std::to_string(first_col + c) + ": got " + std::to_string(g) +
                            ", reference " + std::to_string(e);
        }
      } else if (!std::isnan(g)) {
        t.max_ulp = std::max(t.max_ulp, metrale::bf16_ulp_distance(g, e));
      }
    }
  }
}

bool report(const char* name, const Tally& t) {
  std::printf("%-34s %10llu outputs, %llu outside the budget, max %u BF16 ULP\n", name,
              static_cast<unsigned long long>(t.checked),
              static_cast<unsigned long long>(t.failures), t.max_ulp);
  if (t.failures != 0) std::printf("  first failure: %s\n", t.first_failure.c_str());
  return t.failures == 0 && t.checked > 0;
}

// Dense FFN projection for every row count 1..32 against the scalar reference.
bool run_dense_ffn(KernelService& service, Filler& fill) {
  constexpr std::uint32_t kN = 2048, kK = 4096, kMaxRows = metrale::DENSE_FFN_M16_TC_MAX_ROWS;
  metrale::CudaBackend& gpu = service.backend();
  const metrale::M16TcKernel ffn = service.ffn_kernel();  // METRALE_FFN_M16_TC_NTILE
  const metrale::KernelHandle reference = service.kernel("w8a16_gemv_batch16");
  Weight w(gpu, fill, kN, kK, 11);
  DeviceBuffer input(gpu, std::size_t{kMaxRows} * kK * 2);
  DeviceBuffer out(gpu, std::size_t{kMaxRows} * kN * 2);
  DeviceBuffer ref(gpu, std::size_t{kMaxRows} * kN * 2);
  fill.bf16(input.get(), kMaxRows * kK, 7, 1.0f);

  Tally t;
  for (std::uint32_t rows = 1; rows <= kMaxRows; ++rows) {
    fill.poison(out.get(), rows * kN);
    fill.poison(ref.get(), rows * kN);
    metrale::dense_ffn_m16_tc(ffn, service.levers(), service.gpu(), input.get(), w.codes.get(),
                              w.scales.get(), out.get(), rows, kN, kK, 0);
    // The reference takes at most 16 rows a call.
    for (std::uint32_t r0 = 0; r0 < rows; r0 += 16) {
      const std::uint32_t m = std::min(16u, rows - r0);
      metrale::w8a16_gemv_batch16(
          service.gpu(), reference, input.get() + std::uint64_t{r0} * kK * 2, w.codes.get(),
          w.scales.get(), ref.get() + std::uint64_t{r0} * kN * 2, m, kN, kK, 0);
    }
    gpu.synchronize();
    check(t, download(gpu, out.get(), rows * kN), download(gpu, ref.get(), rows * kN), rows, kN, 0,
          kN, kK, ("dense FFN, " + std::to_string(rows) + " rows").c_str());
  }
  const std::string name = "dense FFN N=2048 K=4096 tile " + std::to_string(ffn.n_tile);
  return report(name.c_str(), t);
}

// Q, K and V projections of a multi-sequence decode step into one strided QKV buffer.
bool run_qkv(KernelService& service, Filler& fill) {
  constexpr std::uint32_t kK = 2048, kStride = kK + 64;  // padded activation rows
  constexpr std::uint32_t kQ = 2048, kKv = 256, kPerSeq = kQ + 2 * kKv, kMaxSeq = 16;
  metrale::CudaBackend& gpu = service.backend();
  const metrale::KernelHandle strided = service.kernel("w8a16_gemm_m16_strided");
  const metrale::KernelHandle reference = service.kernel("w8a16_gemv_batch16_strided");
  const metrale::QkvSlot slots[] = {{0, kQ}, {kQ, kKv}, {kQ + kKv, kKv}};
  Weight wq(gpu, fill, kQ, kK, 21), wk(gpu, fill, kKv, kK, 23), wv(gpu, fill, kKv, kK, 25);
  const Weight* weights[] = {&wq, &wk, &wv};
  DeviceBuffer input(gpu, std::size_t{kMaxSeq} * kStride * 2);
  DeviceBuffer qkv(gpu, std::size_t{kMaxSeq} * kPerSeq * 2);
  DeviceBuffer ref(gpu, std::size_t{kMaxSeq} * kPerSeq * 2);
  fill.bf16(input.get(), kMaxSeq * kStride, 9, 1.0f);

  Tally t;
  for (std::uint32_t n_seq : {1u, 3u, 8u, 16u}) {
    fill.poison(qkv.get(), n_seq * kPerSeq);
    fill.poison(ref.get(), n_seq * kPerSeq);
    for (int i = 0; i < 3; ++i) {
      metrale::qkv_projection_m16_tc(service.levers(), service.gpu(), strided, input.get(), kStride,
                                     weights[i]->codes.get(), weights[i]->scales.get(), qkv.get(),
                                     kPerSeq, slots[i], n_seq, kK, 0);
      metrale::w8a16_gemv_batch16_strided(service.gpu(), reference, input.get(),
                                          weights[i]->codes.get(), weights[i]->scales.get(),
                                          ref.get() + std::uint64_t{slots[i].offset} * 2, n_seq,
                                          slots[i].width, kK, kStride, kPerSeq, 0);
    }
    gpu.synchronize();
    check(t, download(gpu, qkv.get(), n_seq * kPerSeq), download(gpu, ref.get(), n_seq * kPerSeq),
          n_seq, kPerSeq, 0, kPerSeq, kK, ("QKV, " + std::to_string(n_seq) + " sequences").c_str());
  }
  return report("QKV strided Q2048+K256+V256 K=2048", t);
}

// DeepSeek-V3's q_a and kv_a projections (1536 and 576 x 7168) through the automatic choice:
// the library plans each shape for the device and launches the entry it picks, on one
// workspace sized for the largest plan and zeroed once.
bool run_auto(KernelService& service, Filler& fill) {
  constexpr std::uint32_t kK = 7168, kMaxRows = 16;
  metrale::CudaBackend& gpu = service.backend();
  const metrale::KernelHandle reference = service.kernel("w8a16_gemv_batch16");
  const metrale::M16PlanDevice device = metrale::plan_device(service);
  Weight q_a(gpu, fill, 1536, kK, 31), kv_a(gpu, fill, 576, kK, 33);
  std::uint64_t ws_bytes = 16;
  for (const Weight* w : {&q_a, &kv_a}) {
    for (std::uint32_t rows = 1; rows <= kMaxRows; ++rows) {
      ws_bytes =
          std::max(ws_bytes, metrale::w8a16_gemm_m16_auto_workspace_bytes(rows, w->n, kK, device));
    }
  }
  DeviceBuffer workspace(gpu, ws_bytes);
  gpu.fill_bytes(workspace.get(), 0, ws_bytes);
  DeviceBuffer input(gpu, std::size_t{kMaxRows} * kK * 2);
  DeviceBuffer out(gpu, std::size_t{kMaxRows} * 1536 * 2);
  DeviceBuffer ref(gpu, std::size_t{kMaxRows} * 1536 * 2);
  fill.bf16(input.get(), kMaxRows * kK, 13, 1.0f);

  Tally t;
  for (const Weight* w : {&q_a, &kv_a}) {
    for (std::uint32_t rows : {1u, 4u, 8u, 16u}) {
      fill.poison(out.get(), rows * w->n);
      fill.poison(ref.get(), rows * w->n);
      metrale::w8a16_gemm_m16_auto(service, input.get(), w->codes.get(), w->scales.get(),
                                   out.get(), rows, w->n, kK, kK, w->n,
                                   {workspace.get(), ws_bytes}, 0);
      metrale::w8a16_gemv_batch16(service.gpu(), reference, input.get(), w->codes.get(),
                                  w->scales.get(), ref.get(), rows, w->n, kK, 0);
      gpu.synchronize();
      check(t, download(gpu, out.get(), rows * w->n), download(gpu, ref.get(), rows * w->n), rows,
            w->n, 0, w->n, kK,
            ("auto " + std::to_string(w->n) + " x 7168, " + std::to_string(rows) + " tokens")
                .c_str());
    }
  }
  return report("auto q_a 1536 / kv_a 576 x 7168", t);
}

void usage(std::FILE* to) {
  std::fprintf(to, "usage: engine_cpp [DEVICE]   (DEVICE: CUDA device ordinal, default 0)\n");
}

// The whole of `text` as an ordinal in 0..INT_MAX: atoi would take "--help" or "1x" for a
// device and run on the wrong one.
bool parse_device(const char* text, int& device) {
  if (text[0] < '0' || text[0] > '9') return false;
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || value > INT_MAX) return false;
  device = static_cast<int>(value);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  // Arguments first: a bad one is the caller's mistake whether or not a GPU is here.
  if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    usage(stdout);
    return 0;
  }
  int device = 0;
  if (argc > 2 || (argc == 2 && !parse_device(argv[1], device))) {
    std::fprintf(stderr, "engine_cpp: bad argument '%s'\n", argv[argc > 2 ? 2 : 1]);
    usage(stderr);
    return kBadArgument;
  }
  try {
    // Probe first, so that a machine without a GPU is a clear skip rather than a failure.
    const std::string reason = metrale::cuda_unavailable_reason();
    if (!reason.empty()) {
      std::printf("%s%s\n",
                  reason.rfind("no CUDA device", 0) == 0 ? "" : "no CUDA device: ", reason.c_str());
      return kNoDevice;
    }
    KernelService service(device);
    std::printf("metrale engine_cpp: device %d %s (%s)\n", device,
                service.backend().info().name.c_str(), service.target().c_str());
    // Compile every kernel before serving: no request ever waits for NVRTC, and the
    // launch path is safe to capture in a CUDA graph.
    service.warm_up();
    Filler fill(service);
    const bool ffn_ok = run_dense_ffn(service, fill);
    const bool qkv_ok = run_qkv(service, fill);
    const bool auto_ok = run_auto(service, fill);
    const metrale::ModuleCacheStats stats = service.cache().stats();
    std::printf("module cache: %llu compiled, %llu hits\n",
                static_cast<unsigned long long>(stats.compiles),
                static_cast<unsigned long long>(stats.hits));
    const bool ok = ffn_ok && qkv_ok && auto_ok;
    std::printf("%s\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
  } catch (const metrale::Error& e) {
    std::fprintf(stderr, "engine_cpp: %s\n", e.what());
    return 1;
  }
}
