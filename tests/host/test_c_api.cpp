// The C ABI refuses bad calls with the right status and the C++ library's message, and
// never crashes or lets an exception out. Runs without a GPU: launches go to a
// compile-only service, whose argument checks run before it refuses to launch.
#include <doctest/doctest.h>
#include <spdlog/logger.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "c_api_internal.hpp"
#include "metrale/error.hpp"
#include "metrale/kernels.h"
#include "metrale/log.hpp"
#include "metrale/m16_plan.hpp"
#include "metrale/module_cache.hpp"
#include "metrale/nvrtc_compiler.hpp"
#include "metrale/w8a16_gemm_m16.hpp"
#include "metrale/w8a16_gemm_m16_skinny.hpp"
#include "metrale/w8a16_gemm_m16_splitk.hpp"
#include "metrale/w8a16_gemm_m16_streamk.hpp"
#include "support/fake_backend.hpp"
#include "support/launcher_fixture.hpp"

namespace {

// The launcher tests' fake device addresses, as the C ABI takes them.
constexpr uint64_t kIn = metrale::test::kIn.address, kW = metrale::test::kW.address,
                   kS = metrale::test::kS.address, kOut = metrale::test::kOut.address;
constexpr uint64_t kWs = metrale::test::kWs.address;  // a stream-K workspace

std::string last_error() { return metrale_last_error(); }

// Expects `status` and a message that contains `text`.
void expect(metrale_status got, metrale_status want, const std::string& text) {
  CHECK_MESSAGE(got == want, metrale_status_name(got), " (", last_error(), ")");
  CHECK_MESSAGE(last_error().find(text) != std::string::npos, "message: ", last_error(),
                "\nexpected to contain: ", text);
}

// A compile-only service for the test; destroyed at scope exit.
class Service {
 public:
  explicit Service(const char* target = "sm_90") {
    REQUIRE(metrale_service_create_for_target(target, &handle_) == METRALE_OK);
    REQUIRE(handle_ != nullptr);
  }
  ~Service() { metrale_service_destroy(handle_); }
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;
  metrale_service* get() const { return handle_; }

 private:
  metrale_service* handle_ = nullptr;
};

// Sets an environment variable for a scope, restoring the old value after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// The message the C++ launcher throws for the same arguments.
std::string cpp_error_of_gemm_m16(uint64_t input, uint32_t m, uint32_t n, uint32_t k) {
  metrale::test::RecordingBackend gpu;
  try {
    metrale::w8a16_gemm_m16(gpu, metrale::KernelHandle{}, metrale::DevicePtr(input),
                            metrale::DevicePtr(kW), metrale::DevicePtr(kS),
                            metrale::DevicePtr(kOut), m, n, k, 0);
  } catch (const metrale::Error& e) {
    return e.what();
  }
  return "<no error>";
}

}  // namespace

TEST_CASE("C ABI: version, status names, NULL destroy") {
  const std::string version = metrale_version();
  CHECK(version.find('.') != std::string::npos);
  CHECK(std::string(metrale_status_name(METRALE_OK)) == "METRALE_OK");
  CHECK(std::string(metrale_status_name(METRALE_ERROR_INVALID_ARGUMENT)) ==
        "METRALE_ERROR_INVALID_ARGUMENT");
  CHECK(std::string(metrale_status_name(METRALE_ERROR_NO_DEVICE)) == "METRALE_ERROR_NO_DEVICE");
  CHECK(std::string(metrale_status_name(static_cast<metrale_status>(7))) == "unknown status");
  metrale_service_destroy(nullptr);
}

TEST_CASE("C ABI: creating services") {
  metrale_service* s = reinterpret_cast<metrale_service*>(0x1);
  expect(metrale_service_create(0, nullptr), METRALE_ERROR_INVALID_ARGUMENT,
         "metrale_service_create: out is NULL");
  expect(metrale_service_create_for_target(nullptr, &s), METRALE_ERROR_INVALID_ARGUMENT,
         "metrale_service_create_for_target: target is NULL");
  CHECK(s == nullptr);
  expect(metrale_service_create_for_target("sm_90", nullptr), METRALE_ERROR_INVALID_ARGUMENT,
         "metrale_service_create_for_target: out is NULL");
  expect(metrale_service_create_for_target("gfx90a", &s), METRALE_ERROR_INVALID_ARGUMENT,
         "invalid target 'gfx90a'");
  CHECK(s == nullptr);
  expect(metrale_service_create_for_target("sm_10", &s), METRALE_ERROR_INVALID_ARGUMENT,
         "cannot compile for sm_10");

  s = reinterpret_cast<metrale_service*>(0x1);
  expect(metrale_service_create(-1, &s), METRALE_ERROR_NO_DEVICE, "CUDA");
  CHECK(s == nullptr);

  // Device 0 exists on a GPU machine only; elsewhere the reason names the driver.
  const metrale_status st = metrale_service_create(0, &s);
  if (st == METRALE_OK) {
    int compile_only = -1;
    CHECK(metrale_service_is_compile_only(s, &compile_only) == METRALE_OK);
    CHECK(compile_only == 0);
    metrale_service_destroy(s);
  } else {
    CHECK(st == METRALE_ERROR_NO_DEVICE);
    CHECK(s == nullptr);
    MESSAGE("no device here: ", last_error());
    CHECK(last_error().starts_with("no CUDA"));
  }

  Service svc("9.0");
  const char* target = nullptr;
  CHECK(metrale_service_target(svc.get(), &target) == METRALE_OK);
  CHECK(std::string(target) == "sm_90");
  CHECK(last_error().empty());  // a success clears the message
  int compile_only = -1;
  CHECK(metrale_service_is_compile_only(svc.get(), &compile_only) == METRALE_OK);
  CHECK(compile_only == 1);
  expect(metrale_service_target(svc.get(), nullptr), METRALE_ERROR_INVALID_ARGUMENT,
         "metrale_service_target: out is NULL");
  expect(metrale_service_is_compile_only(nullptr, &compile_only), METRALE_ERROR_INVALID_ARGUMENT,
         "metrale_service_is_compile_only: service is NULL");
}

TEST_CASE("C ABI: every entry refuses a NULL service") {
  uint32_t tile = 0;
  uint64_t ptr = 0;
  const char* target = nullptr;
  int flag = 0;
  char host[16] = {};
  struct Case {
    const char* fn;
    metrale_status status;
  };
  const Case cases[] = {
      {"metrale_service_target", metrale_service_target(nullptr, &target)},
      {"metrale_warm_up", metrale_warm_up(nullptr, nullptr, 0)},
      {"metrale_w8a16_gemm_m16",
       metrale_w8a16_gemm_m16(nullptr, kIn, kW, kS, kOut, 1, 32, 128, nullptr)},
      {"metrale_w8a16_gemm_m16_n64",
       metrale_w8a16_gemm_m16_n64(nullptr, kIn, kW, kS, kOut, 1, 32, 128, nullptr)},
      {"metrale_w8a16_gemm_m16_strided",
       metrale_w8a16_gemm_m16_strided(nullptr, kIn, kW, kS, kOut, 1, 32, 128, 128, 32, nullptr)},
      {"metrale_w8a16_gemm_m16_splitk",
       metrale_w8a16_gemm_m16_splitk(nullptr, kIn, kW, kS, kOut, 1, 32, 256, 256, 32, 2,
                                     nullptr)},
      {"metrale_w8a16_gemm_m16_streamk",
       metrale_w8a16_gemm_m16_streamk(nullptr, kIn, kW, kS, kOut, 1, 32, 256, 256, 32, kWs,
                                      1 << 20, 8, nullptr)},
      {"metrale_w8a16_gemm_m16_skinny",
       metrale_w8a16_gemm_m16_skinny(nullptr, kIn, kW, kS, kOut, 1, 32, 256, 256, 32, kWs,
                                     1 << 20, nullptr)},
      {"metrale_w8a16_gemm_m16_skinny_deep",
       metrale_w8a16_gemm_m16_skinny_deep(nullptr, kIn, kW, kS, kOut, 1, 32, 256, 256, 32,
                                          nullptr)},
      {"metrale_w8a16_gemm_m16_skinny_deep_chunked",
       metrale_w8a16_gemm_m16_skinny_deep_chunked(nullptr, kIn, kW, kS, kOut, 1, 32, 256, 256,
                                                  32, kWs, 1 << 20, nullptr)},
      {"metrale_w8a16_gemm_m16_skinny_deep_chunked_workspace_bytes",
       metrale_w8a16_gemm_m16_skinny_deep_chunked_workspace_bytes(nullptr, 1, 32, 256, &ptr)},
      {"metrale_w8a16_gemm_m16_auto",
       metrale_w8a16_gemm_m16_auto(nullptr, kIn, kW, kS, kOut, 1, 32, 256, 256, 32, kWs, 1 << 20,
                                   0, nullptr)},
      {"metrale_w8a16_gemm_m16_auto_workspace_bytes",
       metrale_w8a16_gemm_m16_auto_workspace_bytes(nullptr, 1, 32, 256, 0, &ptr)},
      {"metrale_plan_m16_gemm", metrale_plan_m16_gemm(nullptr, 1, 576, 7168, &tile)},
      {"metrale_plan_m16_gemm_entry",
       metrale_plan_m16_gemm_entry(nullptr, 1, 576, 7168, &target, &tile, &tile)},
      {"metrale_plan_m16_gemm_entry_chunked",
       metrale_plan_m16_gemm_entry_chunked(nullptr, 1, 576, 7168, &target, &tile, &tile)},
      {"metrale_w8a16_gemv_batch16",
       metrale_w8a16_gemv_batch16(nullptr, kIn, kW, kS, kOut, 1, 32, 128, nullptr)},
      {"metrale_w8a16_gemv_batch16_strided",
       metrale_w8a16_gemv_batch16_strided(nullptr, kIn, kW, kS, kOut, 1, 32, 128, 128, 32,
                                          nullptr)},
      {"metrale_dense_ffn_select", metrale_dense_ffn_select(nullptr, &tile)},
      {"metrale_dense_ffn", metrale_dense_ffn(nullptr, 32, kIn, kW, kS, kOut, 1, 32, 128, nullptr)},
      {"metrale_qkv_projection",
       metrale_qkv_projection(nullptr, kIn, 128, kW, kS, kOut, 96, 0, 32, 1, 128, nullptr)},
      {"metrale_fill_random_bf16", metrale_fill_random_bf16(nullptr, kOut, 8, 1, 1.0f, nullptr)},
      {"metrale_fill_random_fp8", metrale_fill_random_fp8(nullptr, kOut, 8, 1, 0x7E, nullptr)},
      {"metrale_fill_random_f32",
       metrale_fill_random_f32(nullptr, kOut, 8, 1, 0.0f, 1.0f, nullptr)},
      {"metrale_alloc", metrale_alloc(nullptr, 16, &ptr)},
      {"metrale_free", metrale_free(nullptr, kOut)},
      {"metrale_upload", metrale_upload(nullptr, kOut, host, sizeof host)},
      {"metrale_download", metrale_download(nullptr, host, kOut, sizeof host)},
      {"metrale_synchronize", metrale_synchronize(nullptr)},
  };
  // Each status above was taken before the next call overwrote the message, so check
  // the statuses here and one message per entry below.
  for (const Case& c : cases) {
    CAPTURE(c.fn);
    CHECK(c.status == METRALE_ERROR_INVALID_ARGUMENT);
  }
  CHECK(metrale_service_is_compile_only(nullptr, &flag) == METRALE_ERROR_INVALID_ARGUMENT);
  expect(metrale_w8a16_gemm_m16(nullptr, kIn, kW, kS, kOut, 1, 32, 128, nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "metrale_w8a16_gemm_m16: service is NULL");
  expect(metrale_dense_ffn(nullptr, 32, kIn, kW, kS, kOut, 1, 32, 128, nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "metrale_dense_ffn: service is NULL");
  expect(metrale_synchronize(nullptr), METRALE_ERROR_INVALID_ARGUMENT,
         "metrale_synchronize: service is NULL");
  expect(metrale_plan_m16_gemm_entry(nullptr, 1, 576, 7168, &target, &tile, &tile),
         METRALE_ERROR_INVALID_ARGUMENT, "metrale_plan_m16_gemm_entry: service is NULL");
  expect(metrale_w8a16_gemm_m16_skinny_deep_chunked_workspace_bytes(nullptr, 1, 32, 256, &ptr),
         METRALE_ERROR_INVALID_ARGUMENT,
         "metrale_w8a16_gemm_m16_skinny_deep_chunked_workspace_bytes: service is NULL");
}

TEST_CASE("C ABI: launchers check their arguments, then refuse to launch without a device") {
  Service svc;
  metrale_service* s = svc.get();

  // Good arguments reach the launch, which a compile-only service refuses.
  expect(metrale_w8a16_gemm_m16(s, kIn, kW, kS, kOut, 16, 4096, 7168, nullptr),
         METRALE_ERROR_NO_DEVICE,
         "compile-only service (sm_90): no CUDA device to launch w8a16_gemm_m16");
  expect(metrale_w8a16_gemm_m16_n64(s, kIn, kW, kS, kOut, 1, 64, 128, nullptr),
         METRALE_ERROR_NO_DEVICE, "no CUDA device to launch w8a16_gemm_m16_n64");
  expect(metrale_w8a16_gemm_m16_strided(s, kIn, kW, kS, kOut, 4, 96, 128, 136, 96, nullptr),
         METRALE_ERROR_NO_DEVICE, "no CUDA device to launch w8a16_gemm_m16_strided");
  expect(metrale_w8a16_gemv_batch16(s, kIn, kW, kS, kOut, 16, 100, 256, nullptr),
         METRALE_ERROR_NO_DEVICE, "no CUDA device to launch w8a16_gemv_batch16");
  expect(metrale_w8a16_gemv_batch16_strided(s, kIn, kW, kS, kOut, 2, 32, 128, 128, 32, nullptr),
         METRALE_ERROR_NO_DEVICE, "no CUDA device to launch w8a16_gemv_batch16_strided");

  // m, k, n and pointers: the C++ guards' messages, word for word.
  expect(metrale_w8a16_gemm_m16(s, kIn, kW, kS, kOut, 0, 32, 128, nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "w8a16_gemm_m16: m=0 outside 1..=16");
  CHECK(last_error() == cpp_error_of_gemm_m16(kIn, 0, 32, 128));
  expect(metrale_w8a16_gemm_m16(s, kIn, kW, kS, kOut, 17, 32, 128, nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "m=17 outside 1..=16");
  CHECK(last_error() == cpp_error_of_gemm_m16(kIn, 17, 32, 128));
  expect(metrale_w8a16_gemm_m16(s, kIn, kW, kS, kOut, 1, 32, 100, nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "K=100 not a multiple of 128");
  CHECK(last_error() == cpp_error_of_gemm_m16(kIn, 1, 32, 100));
  expect(metrale_w8a16_gemm_m16(s, kIn + 8, kW, kS, kOut, 1, 32, 128, nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "input=0x10000000008 is not 16-byte aligned");
  CHECK(last_error() == cpp_error_of_gemm_m16(kIn + 8, 1, 32, 128));
  expect(metrale_w8a16_gemm_m16(s, kIn, kW, kS, kOut, 1, 0, 128, nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "n=0");
  expect(metrale_w8a16_gemm_m16_n64(s, kIn, kW + 4, kS, kOut, 1, 64, 128, nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "w8a16_gemm_m16_n64: weight=0x20000000004 is not 16-byte");
  expect(metrale_w8a16_gemm_m16_n64(s, kIn, kW, kS + 2, kOut, 1, 64, 128, nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "block_scale=0x30000000002 is not 4-byte aligned");
  expect(metrale_w8a16_gemm_m16_n64(s, kIn, kW, kS, kOut + 1, 1, 64, 128, nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "output=0x40000000001 is not 2-byte aligned");
  expect(metrale_w8a16_gemm_m16(s, 0, kW, kS, kOut, 1, 32, 128, nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "input is a null device pointer");
  expect(metrale_w8a16_gemv_batch16(s, kIn, kW, kS, kOut, 17, 32, 128, nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "w8a16_gemv_batch16: m=17 outside 1..=16");
  expect(metrale_w8a16_gemv_batch16(s, kIn, kW, kS, kOut, 1, 32, 100, nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "K=100 not a multiple of 128");

  // Strides.
  expect(metrale_w8a16_gemm_m16_strided(s, kIn, kW, kS, kOut, 1, 32, 128, 132, 32, nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "a_row_stride=132 must keep rows 16B-aligned");
  expect(metrale_w8a16_gemm_m16_strided(s, kIn, kW, kS, kOut, 1, 32, 256, 128, 32, nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "must cover the used extents");
  expect(metrale_w8a16_gemv_batch16_strided(s, kIn, kW, kS, kOut, 1, 64, 128, 128, 32, nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "must cover the used extents");
  expect(metrale_w8a16_gemv_batch16_strided(s, kIn, kW, kS, kOut, 0, 32, 128, 128, 32, nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "m=0 outside 1..=16");

  // Split K: the split's own checks, then the launch a compile-only service refuses.
  expect(metrale_w8a16_gemm_m16_splitk(s, kIn, kW, kS, kOut, 4, 576, 7168, 7168, 576, 9,
                                       nullptr),
         METRALE_ERROR_INVALID_ARGUMENT,
         "w8a16_gemm_m16_splitk: split=9 outside 1..=8 (portable cluster size)");
  expect(metrale_w8a16_gemm_m16_splitk(s, kIn, kW, kS, kOut, 4, 576, 256, 256, 576, 4,
                                       nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "split=4 exceeds the K/128=2 blocks to share");
  expect(metrale_w8a16_gemm_m16_splitk(s, kIn, kW, kS, kOut, 4, 576, 7168, 7168, 576, 8,
                                       nullptr),
         METRALE_ERROR_NO_DEVICE, "no CUDA device to launch w8a16_gemm_m16_splitk");
  std::uint32_t split = 0;
  expect(metrale_plan_m16_gemm(s, 1, 576, 7168, nullptr), METRALE_ERROR_INVALID_ARGUMENT,
         "metrale_plan_m16_gemm: split_out is NULL");
  CHECK(metrale_plan_m16_gemm(s, 1, 576, 7168, &split) == METRALE_OK);
  CHECK(split == 1);  // the skinny entry
  CHECK(metrale_plan_m16_gemm(s, 1, 576, 512, &split) == METRALE_OK);
  CHECK(split == 1);
  CHECK(metrale_plan_m16_gemm(s, 1, 4096, 14336, &split) == METRALE_OK);
  CHECK(split == 1);
  CHECK(metrale_plan_m16_gemm(s, 16, 28672, 4096, &split) == METRALE_OK);
  CHECK(split == 1);

  // Stream-K: its workspace and CTA checks, then the refused launch.
  uint64_t bytes = 0;
  expect(metrale_w8a16_gemm_m16_streamk_workspace_bytes(576, 8, nullptr),
         METRALE_ERROR_INVALID_ARGUMENT,
         "metrale_w8a16_gemm_m16_streamk_workspace_bytes: bytes_out is NULL");
  CHECK(metrale_w8a16_gemm_m16_streamk_workspace_bytes(576, 8, &bytes) == METRALE_OK);
  CHECK(bytes == metrale::w8a16_gemm_m16_streamk_workspace_bytes(576, 8));
  expect(metrale_w8a16_gemm_m16_streamk(s, kIn, kW, kS, kOut, 4, 576, 7168, 7168, 576, 0, bytes,
                                        8, nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "w8a16_gemm_m16_streamk: workspace is null");
  expect(metrale_w8a16_gemm_m16_streamk(s, kIn, kW, kS, kOut, 4, 576, 7168, 7168, 576, kWs,
                                        bytes - 1, 8, nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "w8a16_gemm_m16_streamk_workspace_bytes");
  expect(metrale_w8a16_gemm_m16_streamk(s, kIn, kW, kS, kOut, 4, 576, 7168, 7168, 576, kWs,
                                        bytes, 0, nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "ctas=0 must be at least 1");
  expect(metrale_w8a16_gemm_m16_streamk(s, kIn, kW, kS, kOut, 4, 576, 7168, 7168, 576, kWs,
                                        bytes, 8, nullptr),
         METRALE_ERROR_NO_DEVICE, "no CUDA device to launch w8a16_gemm_m16_streamk");

  // The skinny entry: its workspace (none where one chunk of 1024 covers K), then the
  // refused launch.
  expect(metrale_w8a16_gemm_m16_skinny_workspace_bytes(576, 7168, nullptr),
         METRALE_ERROR_INVALID_ARGUMENT,
         "metrale_w8a16_gemm_m16_skinny_workspace_bytes: bytes_out is NULL");
  expect(metrale_w8a16_gemm_m16_skinny_workspace_bytes(576, 100, &bytes),
         METRALE_ERROR_INVALID_ARGUMENT, "k=100 is not a positive multiple of 128");
  CHECK(metrale_w8a16_gemm_m16_skinny_workspace_bytes(576, 1024, &bytes) == METRALE_OK);
  CHECK(bytes == 0);
  CHECK(metrale_w8a16_gemm_m16_skinny_workspace_bytes(576, 7168, &bytes) == METRALE_OK);
  CHECK(bytes == metrale::w8a16_gemm_m16_skinny_workspace_bytes(576, 7168, 8, 1));
  CHECK(bytes == 36 * 6 * 2048);
  expect(metrale_w8a16_gemm_m16_skinny(s, kIn, kW, kS, kOut, 4, 576, 7168, 7168, 576, 0, bytes,
                                       nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "w8a16_gemm_m16_skinny: workspace is null");
  expect(metrale_w8a16_gemm_m16_skinny(s, kIn, kW, kS, kOut, 4, 576, 7168, 7168, 576, kWs,
                                       bytes - 16, nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "w8a16_gemm_m16_skinny_workspace_bytes");
  expect(metrale_w8a16_gemm_m16_skinny(s, kIn, kW, kS, kOut, 17, 576, 7168, 7168, 576, kWs,
                                       bytes, nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "m=17 outside 1..=16");
  expect(metrale_w8a16_gemm_m16_skinny(s, kIn, kW, kS, kOut, 4, 576, 1024, 1024, 576, 0, 0,
                                       nullptr),
         METRALE_ERROR_NO_DEVICE, "no CUDA device to launch w8a16_gemm_m16_skinny");
  expect(metrale_w8a16_gemm_m16_skinny(s, kIn, kW, kS, kOut, 4, 576, 7168, 7168, 576, kWs,
                                       bytes, nullptr),
         METRALE_ERROR_NO_DEVICE, "no CUDA device to launch w8a16_gemm_m16_skinny");

  // The whole plan: the C function to call, its split and its CTAs.
  const char* entry = nullptr;
  uint32_t ctas = 7;
  expect(metrale_plan_m16_gemm_entry(s, 1, 576, 7168, nullptr, &split, &ctas),
         METRALE_ERROR_INVALID_ARGUMENT, "metrale_plan_m16_gemm_entry: entry_out is NULL");
  expect(metrale_plan_m16_gemm_entry(s, 1, 576, 7168, &entry, &split, nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "metrale_plan_m16_gemm_entry: ctas_out is NULL");
  using PlanFn = metrale_status (*)(metrale_service*, uint32_t, uint32_t, uint32_t,
                                    const char**, uint32_t*, uint32_t*);
  const auto expect_plan_of = [&](PlanFn plan_fn, uint32_t m, uint32_t n, uint32_t k,
                                  const char* want_entry, uint32_t want_split,
                                  uint32_t want_ctas) {
    CAPTURE(m);
    CAPTURE(n);
    CAPTURE(k);
    REQUIRE(plan_fn(s, m, n, k, &entry, &split, &ctas) == METRALE_OK);
    CHECK(std::string(entry) == want_entry);
    CHECK(split == want_split);
    CHECK(ctas == want_ctas);
  };
  const auto expect_plan = [&](uint32_t m, uint32_t n, uint32_t k, const char* want_entry,
                               uint32_t want_split, uint32_t want_ctas) {
    expect_plan_of(metrale_plan_m16_gemm_entry, m, n, k, want_entry, want_split, want_ctas);
  };
  expect_plan(1, 576, 7168, "metrale_w8a16_gemm_m16_skinny", 1, 0);
  expect_plan(10, 1536, 7168, "metrale_w8a16_gemm_m16_skinny", 1, 0);
  expect_plan(12, 1536, 7168, "metrale_w8a16_gemm_m16_skinny_deep", 1, 0);
  expect_plan(16, 1536, 7168, "metrale_w8a16_gemm_m16_skinny_deep", 1, 0);
  expect_plan(1, 576, 512, "metrale_w8a16_gemm_m16", 1, 0);
  // At K = 512 the plan's skinny entry has 4 warps, as the C function runs it (item 124).
  CHECK(metrale::plan_m16_gemm(4, 16384, 512, 132).warps == 4u);
  expect_plan(4, 16384, 512, "metrale_w8a16_gemm_m16_skinny", 1, 0);
  expect_plan(16, 51200, 5120, "metrale_w8a16_gemm_m16_streamk", 1, 264);
  // The C++ plan's streaming entry (208 tiles of 128 rows, unsplit) has no C function.
  CHECK(metrale::plan_m16_gemm(1, 26624, 1152, 132).entry == "w8a16_gemm_m16_stream");
  expect_plan(1, 26624, 1152, "metrale_w8a16_gemm_m16_splitk", 1, 0);
  expect_plan(1, 24576, 1536, "metrale_w8a16_gemm_m16_skinny_deep", 1, 0);
  expect_plan(16, 4096, 14336, "metrale_w8a16_gemm_m16_skinny_deep", 1, 0);
  // The plan's three-per-SM form (Llama-3-8B qkv above 8 tokens) runs through the same call.
  CHECK(metrale::plan_m16_gemm(16, 6144, 4096, 132).entry == "w8a16_gemm_m16_skinny_deep3");
  expect_plan(16, 6144, 4096, "metrale_w8a16_gemm_m16_skinny_deep", 1, 0);
  // Where the C++ plan runs the deep entry in chunks of K without PDL (item 122), the C
  // plan, whose deep function takes no workspace, is the one-chunk plan.
  CHECK(metrale::plan_m16_gemm(1, 2304, 16384, 132).warp_blocks == 8u);  // 4 chunks
  expect_plan(1, 2304, 16384, "metrale_w8a16_gemm_m16_skinny_deep", 1, 0);
  expect_plan(1, 1280, 8192, "metrale_w8a16_gemm_m16_skinny", 1, 0);

  // A caller with a workspace plans with the C++ plan itself, and the C function of the deep
  // entry in chunks runs the plan's form: 4 chunks of 4 warps of 8 blocks on 2304 x 16384,
  // 4 of 8 warps of 2 on 1280 x 8192, one chunk on 16 warps on Llama-3-8B down.
  const auto expect_chunked_plan = [&](uint32_t m, uint32_t n, uint32_t k,
                                       const char* want_entry, uint32_t want_split,
                                       uint32_t want_ctas) {
    expect_plan_of(metrale_plan_m16_gemm_entry_chunked, m, n, k, want_entry, want_split,
                   want_ctas);
  };
  expect_chunked_plan(1, 2304, 16384, "metrale_w8a16_gemm_m16_skinny_deep_chunked", 1, 0);
  expect_chunked_plan(8, 1280, 8192, "metrale_w8a16_gemm_m16_skinny_deep_chunked", 1, 0);
  expect_chunked_plan(16, 2304, 16384, "metrale_w8a16_gemm_m16_skinny_deep", 1, 0);
  expect_chunked_plan(1, 4096, 14336, "metrale_w8a16_gemm_m16_skinny_deep", 1, 0);
  expect_chunked_plan(16, 51200, 5120, "metrale_w8a16_gemm_m16_streamk", 1, 264);
  expect_chunked_plan(1, 26624, 1152, "metrale_w8a16_gemm_m16_splitk", 1, 0);
  expect(metrale_plan_m16_gemm_entry_chunked(s, 1, 576, 7168, &entry, nullptr, &ctas),
         METRALE_ERROR_INVALID_ARGUMENT,
         "metrale_plan_m16_gemm_entry_chunked: split_out is NULL");

  constexpr auto deep_bytes = metrale_w8a16_gemm_m16_skinny_deep_chunked_workspace_bytes;
  expect(deep_bytes(s, 1, 2304, 16384, nullptr), METRALE_ERROR_INVALID_ARGUMENT,
         "metrale_w8a16_gemm_m16_skinny_deep_chunked_workspace_bytes: bytes_out is NULL");
  expect(deep_bytes(s, 1, 2304, 16100, &bytes), METRALE_ERROR_INVALID_ARGUMENT,
         "k=16100 is not a positive multiple of 128");
  expect(deep_bytes(s, 0, 2304, 16384, &bytes), METRALE_ERROR_INVALID_ARGUMENT,
         "m=0 outside 1..=16");
  CHECK(deep_bytes(s, 16, 2304, 16384, &bytes) == METRALE_OK);
  CHECK(bytes == 0);
  CHECK(deep_bytes(s, 1, 4096, 14336, &bytes) == METRALE_OK);
  CHECK(bytes == 0);
  CHECK(deep_bytes(s, 1, 2304, 16384, &bytes) == METRALE_OK);
  CHECK(bytes == metrale::w8a16_gemm_m16_skinny_workspace_bytes(2304, 16384, 4, 8));
  CHECK(bytes == 144 * 3 * 2048);  // a slot of 2048 bytes per row group and later chunk
  constexpr auto deep_chunked = metrale_w8a16_gemm_m16_skinny_deep_chunked;
  expect(deep_chunked(s, kIn, kW, kS, kOut, 1, 2304, 16384, 16384, 2304, 0, bytes, nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "w8a16_gemm_m16_skinny_deep: workspace is null");
  expect(deep_chunked(s, kIn, kW, kS, kOut, 1, 2304, 16384, 16384, 2304, kWs, bytes - 16,
                      nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "w8a16_gemm_m16_skinny_workspace_bytes");
  expect(deep_chunked(s, kIn, kW, kS, kOut, 17, 2304, 16384, 16384, 2304, kWs, bytes, nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "m=17 outside 1..=16");
  expect(deep_chunked(s, kIn, kW, kS, kOut, 1, 2304, 16384, 16384, 2304, kWs, bytes, nullptr),
         METRALE_ERROR_NO_DEVICE, "no CUDA device to launch w8a16_gemm_m16_skinny_deep");
  expect(deep_chunked(s, kIn, kW, kS, kOut, 1, 4096, 14336, 14336, 4096, 0, 0, nullptr),
         METRALE_ERROR_NO_DEVICE, "no CUDA device to launch w8a16_gemm_m16_skinny_deep");

  // The deep entry: its guards, then no device.
  expect(metrale_w8a16_gemm_m16_skinny_deep(s, kIn, kW, kS, kOut, 17, 4096, 4096, 4096, 4096,
                                            nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "m=17 outside 1..=16");
  expect(metrale_w8a16_gemm_m16_skinny_deep(s, kIn, kW, kS, kOut, 1, 4096, 4000, 4000, 4096,
                                            nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "K=4000 not a multiple of 128");
  expect(metrale_w8a16_gemm_m16_skinny_deep(s, kIn, kW, kS, kOut, 4, 4096, 4096, 4096, 4096,
                                            nullptr),
         METRALE_ERROR_NO_DEVICE, "no CUDA device to launch w8a16_gemm_m16_skinny_deep");
}

TEST_CASE("C ABI: the automatic choice checks everything before it compiles or launches") {
  Service svc;
  metrale_service* s = svc.get();
  uint64_t bytes = 1;
  // Llama-3-8B gate_up at one token: stream-K on one CTA per SM, which takes a workspace;
  // Llama-3-8B o: the deep entry on one chunk, which takes none.
  REQUIRE(metrale_w8a16_gemm_m16_auto_workspace_bytes(s, 1, 28672, 4096, 0, &bytes) ==
          METRALE_OK);
  CHECK(bytes == metrale::w8a16_gemm_m16_streamk_workspace_bytes(28672, 132));
  const uint64_t need = bytes;
  REQUIRE(metrale_w8a16_gemm_m16_auto_workspace_bytes(s, 1, 4096, 4096, 1, &bytes) == METRALE_OK);
  CHECK(bytes == 0);
  expect(metrale_w8a16_gemm_m16_auto_workspace_bytes(s, 1, 4096, 4096, 0, nullptr),
         METRALE_ERROR_INVALID_ARGUMENT,
         "metrale_w8a16_gemm_m16_auto_workspace_bytes: bytes_out is NULL");
  expect(metrale_w8a16_gemm_m16_auto_workspace_bytes(s, 17, 4096, 4096, 0, &bytes),
         METRALE_ERROR_INVALID_ARGUMENT,
         "w8a16_gemm_m16_auto_workspace_bytes: m=17 outside 1..=16");

  // The C++ guards' messages under the C++ function's name.
  const auto call = [&](uint32_t m, uint32_t n, uint32_t k, uint32_t a, uint32_t c,
                        uint64_t out, uint64_t ws, uint64_t ws_bytes) {
    return metrale_w8a16_gemm_m16_auto(s, kIn, kW, kS, out, m, n, k, a, c, ws, ws_bytes, 0,
                                       nullptr);
  };
  expect(call(0, 4096, 4096, 4096, 4096, kOut, 0, 0), METRALE_ERROR_INVALID_ARGUMENT,
         "w8a16_gemm_m16_auto: m=0 outside 1..=16 (kernel M tile)");
  expect(call(1, 4096, 4000, 4000, 4096, kOut, 0, 0), METRALE_ERROR_INVALID_ARGUMENT,
         "w8a16_gemm_m16_auto: K=4000 not a multiple of 128");
  expect(call(1, 4096, 4096, 4100, 4096, kOut, 0, 0), METRALE_ERROR_INVALID_ARGUMENT,
         "w8a16_gemm_m16_auto: a_row_stride=4100 must keep rows 16B-aligned");
  expect(call(1, 4096, 4096, 4096, 4096, kOut + 1, 0, 0), METRALE_ERROR_INVALID_ARGUMENT,
         "w8a16_gemm_m16_auto: output=0x40000000001 is not 2-byte aligned");
  expect(call(1, 28672, 4096, 4096, 28672, kOut, 0, 0), METRALE_ERROR_INVALID_ARGUMENT,
         fmt::format("metrale_w8a16_gemm_m16_auto: the plan (w8a16_gemm_m16_streamk) needs a "
                     "workspace of {} bytes (metrale_w8a16_gemm_m16_auto_workspace_bytes), and "
                     "the caller's is 0 bytes at 0x0",
                     need));
  expect(call(1, 28672, 4096, 4096, 28672, kOut, kWs, need - 16), METRALE_ERROR_INVALID_ARGUMENT,
         "needs a workspace of");
  expect(call(1, 28672, 4096, 4096, 28672, kOut, kWs + 8, need), METRALE_ERROR_INVALID_ARGUMENT,
         "metrale_w8a16_gemm_m16_auto: the plan (w8a16_gemm_m16_streamk) needs a workspace, "
         "and the caller's at 0x50000000008 is not 16-byte aligned");
  expect(call(1, 4096, 0, 0, 4096, kOut, 0, 0), METRALE_ERROR_INVALID_ARGUMENT,
         "w8a16_gemm_m16_auto: K=0 leaves no 128-K block");
  // The plan functions take only shapes the launchers accept.
  const char* entry = nullptr;
  uint32_t split = 0, ctas = 0;
  expect(metrale_plan_m16_gemm(s, 0, 4096, 4096, &split), METRALE_ERROR_INVALID_ARGUMENT,
         "metrale_plan_m16_gemm: m=0 outside 1..=16");
  expect(metrale_plan_m16_gemm_entry(s, 1, 0, 4096, &entry, &split, &ctas),
         METRALE_ERROR_INVALID_ARGUMENT, "metrale_plan_m16_gemm_entry: n=0: nothing to compute");
  expect(metrale_plan_m16_gemm_entry_chunked(s, 1, 4096, 0, &entry, &split, &ctas),
         METRALE_ERROR_INVALID_ARGUMENT,
         "metrale_plan_m16_gemm_entry_chunked: K=0 leaves no 128-K block");
  expect(metrale_plan_m16_gemm_entry(s, 1, 4096, 100, &entry, &split, &ctas),
         METRALE_ERROR_INVALID_ARGUMENT,
         "metrale_plan_m16_gemm_entry: K=100 not a multiple of 128");
  // Good arguments reach the launch, which a compile-only service refuses: with and
  // without a workspace, on strided rows, with PDL.
  expect(call(1, 28672, 4096, 4096, 28672, kOut, kWs, need), METRALE_ERROR_NO_DEVICE,
         "no CUDA device to launch w8a16_gemm_m16_streamk");
  expect(call(1, 4096, 4096, 4608, 4100, kOut, 0, 0), METRALE_ERROR_NO_DEVICE,
         "no CUDA device to launch w8a16_gemm_m16_skinny_deep");
  expect(metrale_w8a16_gemm_m16_auto(s, kIn, kW, kS, kOut, 3, 576, 7168, 7168, 576, kWs,
                                     1 << 20, 1, nullptr),
         METRALE_ERROR_NO_DEVICE, "no CUDA device to launch w8a16_gemm_m16_skinny");
}

TEST_CASE("C ABI: every kind of entry refuses in its guard pass, overlaps included") {
  // (That the guard pass comes before a first use compiles the kernel takes a device
  // service: tests/fake_driver checks it.)
  Service svc;
  metrale_service* s = svc.get();
  const metrale_status bad = METRALE_ERROR_INVALID_ARGUMENT;
  expect(metrale_w8a16_gemm_m16(s, kIn, kW, kS, kOut, 0, 32, 128, nullptr), bad, "m=0");
  expect(metrale_w8a16_gemm_m16_n64(s, kIn, kW, kS, kOut, 1, 64, 100, nullptr), bad, "K=100");
  expect(metrale_w8a16_gemm_m16_strided(s, kIn, kW, kS, kIn, 4, 96, 128, 136, 96, nullptr), bad,
         "output [");
  expect(metrale_w8a16_gemm_m16_splitk(s, kIn, kW, kS, kOut, 4, 576, 256, 256, 576, 4, nullptr),
         bad, "split=4 exceeds");
  expect(metrale_w8a16_gemm_m16_streamk(s, kIn, kW, kS, kOut, 4, 576, 7168, 7168, 576, kWs, 16,
                                        8, nullptr),
         bad, "workspace");
  expect(metrale_w8a16_gemm_m16_skinny(s, kIn, kW, kS, kOut, 17, 576, 7168, 7168, 576, kWs, 0,
                                       nullptr),
         bad, "m=17");
  expect(metrale_w8a16_gemm_m16_skinny_deep(s, kIn, kW, kS, kW, 4, 4096, 4096, 4096, 4096,
                                            nullptr),
         bad, "overlaps weight");
  expect(metrale_w8a16_gemv_batch16(s, kIn, kW, kS, 0, 4, 64, 128, nullptr), bad,
         "output is a null device pointer");
  expect(metrale_dense_ffn(s, 32, kIn, kW, kS, kOut, 20, 32, 100, nullptr), bad, "K=100");
  expect(metrale_qkv_projection(s, kIn, 130, kW, kS, kOut, 128, 0, 64, 2, 128, nullptr), bad,
         "a_row_stride=130");
  expect(metrale_fill_random_bf16(s, 0, 16, 1, 1.0f, nullptr), bad, "out is a null");
}

TEST_CASE("C ABI: dense FFN selection and call") {
  Service svc;
  metrale_service* s = svc.get();
  uint32_t tile = 0;
  {
    const ScopedEnv env("METRALE_FFN_M16_TC_NTILE", nullptr);
    CHECK(metrale_dense_ffn_select(s, &tile) == METRALE_OK);
    CHECK(tile == 32);
  }
  {
    const ScopedEnv env("METRALE_FFN_M16_TC_NTILE", "64");
    CHECK(metrale_dense_ffn_select(s, &tile) == METRALE_OK);
    CHECK(tile == 64);
  }
  {
    const ScopedEnv env("METRALE_FFN_M16_TC_NTILE", "48");
    tile = 7;
    expect(metrale_dense_ffn_select(s, &tile), METRALE_ERROR_INVALID_ARGUMENT,
           "METRALE_FFN_M16_TC_NTILE='48' is not an accepted value (accepted: unset, 32, 64)");
    CHECK(tile == 7);  // untouched on failure
  }
  expect(metrale_dense_ffn_select(s, nullptr), METRALE_ERROR_INVALID_ARGUMENT,
         "metrale_dense_ffn_select: n_tile is NULL");

  expect(metrale_dense_ffn(s, 48, kIn, kW, kS, kOut, 1, 32, 128, nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "n_tile=48 is not a dense-FFN N tile");
  expect(metrale_dense_ffn(s, 32, kIn, kW, kS, kOut, 0, 32, 128, nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "dense_ffn_m16_tc: rows=0 outside 1..=32");
  expect(metrale_dense_ffn(s, 64, kIn, kW, kS, kOut, 33, 32, 128, nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "rows=33 outside 1..=32");
  expect(metrale_dense_ffn(s, 32, kIn, kW, kS, kOut, 5, 32, 100, nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "K=100 not a multiple of 128");
  expect(metrale_dense_ffn(s, 32, kIn + 8, kW, kS, kOut, 20, 32, 128, nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "is not 16-byte aligned");
  expect(metrale_dense_ffn(s, 32, kIn, kW, kS, kOut, 20, 32, 128, nullptr), METRALE_ERROR_NO_DEVICE,
         "no CUDA device to launch w8a16_gemm_m16");
  expect(metrale_dense_ffn(s, 64, kIn, kW, kS, kOut, 32, 64, 256, nullptr), METRALE_ERROR_NO_DEVICE,
         "no CUDA device to launch w8a16_gemm_m16_n64");
}

TEST_CASE("C ABI: strided QKV projection") {
  Service svc;
  metrale_service* s = svc.get();
  // Q 64 + K 32 + V 32 columns per sequence.
  expect(metrale_qkv_projection(s, kIn, 136, kW, kS, kOut, 128, 96, 32, 4, 128, nullptr),
         METRALE_ERROR_NO_DEVICE, "no CUDA device to launch w8a16_gemm_m16_strided");
  expect(metrale_qkv_projection(s, kIn, 136, kW, kS, kOut, 128, 112, 32, 4, 128, nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "slot [112, 144) exceeds the row width per_seq_qkv=128");
  expect(metrale_qkv_projection(s, kIn, 136, kW, kS, kOut, 128, 0, 64, 0, 128, nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "m=0 outside 1..=16");
  expect(metrale_qkv_projection(s, kIn, 136, kW, kS, kOut, 128, 0, 64, 17, 128, nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "m=17 outside 1..=16");
  expect(metrale_qkv_projection(s, kIn, 130, kW, kS, kOut, 128, 0, 64, 2, 128, nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "a_row_stride=130");
  expect(metrale_qkv_projection(s, kIn, 136, kW, kS, kOut, 128, 0, 64, 2, 100, nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "K=100 not a multiple of 128");
}

TEST_CASE("C ABI: a target without BF16 tensor cores is unsupported, not a crash") {
  const auto targets = metrale::nvrtc_supported_targets();
  if (std::find(targets.begin(), targets.end(), "sm_75") == targets.end()) {
    MESSAGE("NVRTC here cannot compile for sm_75; skipped");
    return;
  }
  Service svc("sm_75");
  expect(metrale_dense_ffn(svc.get(), 32, kIn, kW, kS, kOut, 4, 32, 128, nullptr),
         METRALE_ERROR_UNSUPPORTED, "dense_ffn_m16_tc: the target's ffn_m16_tc lever is off");
  expect(metrale_qkv_projection(svc.get(), kIn, 128, kW, kS, kOut, 96, 0, 32, 1, 128, nullptr),
         METRALE_ERROR_UNSUPPORTED, "attn_m16_tc lever is off");
}

TEST_CASE("C ABI: fills and memory on a compile-only service") {
  Service svc;
  metrale_service* s = svc.get();
  expect(metrale_fill_random_bf16(s, 0, 8, 1, 1.0f, nullptr), METRALE_ERROR_INVALID_ARGUMENT,
         "metrale_fill_random_bf16: out is a null device pointer");
  expect(metrale_fill_random_bf16(s, kOut + 1, 8, 1, 1.0f, nullptr), METRALE_ERROR_INVALID_ARGUMENT,
         "out=0x40000000001 is not 2-byte aligned");
  expect(metrale_fill_random_f32(s, kOut + 2, 8, 1, 0.0f, 1.0f, nullptr),
         METRALE_ERROR_INVALID_ARGUMENT, "out=0x40000000002 is not 4-byte aligned");
  expect(metrale_fill_random_fp8(s, kOut, 0, 1, 0x7E, nullptr), METRALE_ERROR_INVALID_ARGUMENT,
         "count=0");
  expect(metrale_fill_random_fp8(s, kOut + 1, 100, 1, 0x7E, nullptr), METRALE_ERROR_NO_DEVICE,
         "no CUDA device to launch fill_random_fp8");

  uint64_t ptr = 123;
  expect(metrale_alloc(s, 16, nullptr), METRALE_ERROR_INVALID_ARGUMENT,
         "metrale_alloc: out is NULL");
  expect(metrale_alloc(s, 16, &ptr), METRALE_ERROR_NO_DEVICE,
         "compile-only service (sm_90): no CUDA device");
  CHECK(ptr == 0);
  char host[16] = {};
  expect(metrale_upload(s, kOut, nullptr, 16), METRALE_ERROR_INVALID_ARGUMENT,
         "metrale_upload: src is NULL");
  expect(metrale_upload(s, 0, host, 16), METRALE_ERROR_INVALID_ARGUMENT,
         "metrale_upload: dst is a null device pointer");
  expect(metrale_download(s, nullptr, kOut, 16), METRALE_ERROR_INVALID_ARGUMENT,
         "metrale_download: dst is NULL");
  expect(metrale_download(s, host, 0, 16), METRALE_ERROR_INVALID_ARGUMENT,
         "metrale_download: src is a null device pointer");
  expect(metrale_upload(s, kOut, host, 16), METRALE_ERROR_NO_DEVICE, "no CUDA device");
  expect(metrale_download(s, host, kOut, 16), METRALE_ERROR_NO_DEVICE, "no CUDA device");
  expect(metrale_free(s, kOut), METRALE_ERROR_NO_DEVICE, "no CUDA device");
  expect(metrale_synchronize(s), METRALE_ERROR_NO_DEVICE, "no CUDA device");
}

TEST_CASE("C ABI: warm-up names, and compile-only warm-up compiles") {
  Service svc;
  metrale_service* s = svc.get();
  expect(metrale_warm_up(s, nullptr, 1), METRALE_ERROR_INVALID_ARGUMENT,
         "metrale_warm_up: variants is NULL");
  const char* with_null[] = {"fill_random", nullptr};
  expect(metrale_warm_up(s, with_null, 2), METRALE_ERROR_INVALID_ARGUMENT,
         "metrale_warm_up: variants[1] is NULL");
  const char* unknown[] = {"nope"};
  expect(metrale_warm_up(s, unknown, 1), METRALE_ERROR_INVALID_ARGUMENT,
         "no kernel variant or entry named nope");

  // The compile is logged at debug level: the callback sees it.
  std::vector<std::string> seen;
  auto collect = [](int level, const char* message, void* user) {
    if (level == METRALE_LOG_DEBUG)
      static_cast<std::vector<std::string>*>(user)->push_back(message);
  };
  CHECK(metrale_set_log_callback(collect, &seen) == METRALE_OK);
  CHECK(metrale_set_log_level(METRALE_LOG_DEBUG) == METRALE_OK);
  const char* fill[] = {"fill_random"};
  // A compile-only warm-up fills the persistent cache; with it off, it must compile.
  const char* cache_setting = std::getenv("METRALE_KERNEL_CACHE");
  const std::string saved_setting = cache_setting != nullptr ? cache_setting : "";
  setenv("METRALE_KERNEL_CACHE", "0", 1);
  CHECK(metrale_warm_up(s, fill, 1) == METRALE_OK);
  if (cache_setting != nullptr) {
    setenv("METRALE_KERNEL_CACHE", saved_setting.c_str(), 1);
  } else {
    unsetenv("METRALE_KERNEL_CACHE");
  }
  CHECK(last_error().empty());
  CHECK(metrale_set_log_level(METRALE_LOG_WARN) == METRALE_OK);
  CHECK(metrale_set_log_callback(nullptr, nullptr) == METRALE_OK);
  bool compiled = false;
  for (const std::string& m : seen) compiled = compiled || m.find("compiled fill_random.cu") == 0;
  CHECK_MESSAGE(compiled, "no debug message about compiling fill_random.cu");

  expect(metrale_set_log_level(7), METRALE_ERROR_INVALID_ARGUMENT,
         "metrale_set_log_level: level=7 outside 0..=6");
  expect(metrale_set_log_level(-1), METRALE_ERROR_INVALID_ARGUMENT, "level=-1");
}

TEST_CASE("C ABI: warming the deep entry warms the 32-row variant its C function runs") {
  std::string dir = "/tmp/metrale-capi-warm-XXXXXX";
  REQUIRE(::mkdtemp(dir.data()) != nullptr);
  {
    ScopedEnv on("METRALE_KERNEL_CACHE", nullptr);
    ScopedEnv at("METRALE_KERNEL_CACHE_DIR", dir.c_str());
    Service svc;
    const char* deep[] = {"w8a16_gemm_m16_skinny_deep"};
    CHECK(metrale_warm_up(svc.get(), deep, 1) == METRALE_OK);
  }
  // A compile-only warm-up fills the persistent cache: the deep variant's two modules
  // (8 and 16 tokens) and the 32-row variant's one.
  std::size_t entries = 0;
  for (const auto& f : std::filesystem::recursive_directory_iterator(dir)) {
    entries += f.is_regular_file() && f.path().string().find(".tmp") == std::string::npos;
  }
  std::filesystem::remove_all(dir);
  CHECK(entries == 3);
}

TEST_CASE("C ABI: a replaced log callback is not called again, through any logger") {
  int first = 0, second = 0;
  auto count = [](int, const char*, void* user) { ++*static_cast<int*>(user); };
  REQUIRE(metrale_set_log_level(METRALE_LOG_WARN) == METRALE_OK);
  REQUIRE(metrale_set_log_callback(count, &first) == METRALE_OK);
  // A logger another thread took before the swap.
  const std::shared_ptr<spdlog::logger> held = metrale::logger();
  REQUIRE(metrale_set_log_callback(count, &second) == METRALE_OK);
  held->warn("late");
  metrale::logger()->warn("now");
  CHECK(first == 0);
  CHECK(second == 2);
  REQUIRE(metrale_set_log_level(METRALE_LOG_ERROR) == METRALE_OK);
  REQUIRE(metrale_set_log_callback(nullptr, nullptr) == METRALE_OK);
  held->error("after NULL");
  CHECK(second == 2);
  // The level set under the callback stays with the default logger.
  CHECK(metrale::logger()->level() == spdlog::level::err);
  REQUIRE(metrale_set_log_level(METRALE_LOG_WARN) == METRALE_OK);
}

TEST_CASE("C ABI: the last error is per thread") {
  Service svc;
  CHECK(metrale_w8a16_gemm_m16(svc.get(), kIn, kW, kS, kOut, 0, 32, 128, nullptr) ==
        METRALE_ERROR_INVALID_ARGUMENT);
  std::string other = "<unset>";
  std::thread([&] { other = metrale_last_error(); }).join();
  CHECK(other.empty());
  CHECK(last_error().find("m=0") != std::string::npos);
}

TEST_CASE("C ABI: numerics for checks") {
  CHECK(metrale_bf16_to_float(0x3F80) == 1.0f);
  CHECK(metrale_bf16_to_float(0xC000) == -2.0f);
  CHECK(metrale_within_m16_tc_budget(1.0f, 1.0f, 128, 1.0) == 1);
  CHECK(metrale_within_m16_tc_budget(1.0f, 1.0078125f, 128, 1.0) == 1);  // 1 ULP
  CHECK(metrale_within_m16_tc_budget(1.0f, 1.5f, 128, 1.0) == 0);
  CHECK(metrale_within_m16_tc_budget(std::nanf(""), 1.0f, 128, 1.0) == 0);
}

TEST_CASE("C ABI: the launch wrapper forwards every backend call to the service's backend") {
  // A wrapper that answered a call itself would hand kernels packed bytes for a tensor
  // map, which the copy engine faults on; stream-K through the C ABI did until it
  // forwarded tensor_map_2d.
  using namespace metrale;
  test::RecordingBackend inner;
  test::CountingCompiler compiler;
  ModuleCache cache(inner, compiler.fn());
  metrale_status phase = METRALE_ERROR_INVALID_ARGUMENT;
  const capi::TrackedGpu gpu(inner, false, phase);
  CHECK(gpu.context() == inner.context());
  CHECK(gpu.target() == inner.target());
  gpu.check_not_capturing("w8a16_gemm_m16_streamk");
  CHECK(inner.capture_checks.load() == 1);

  constexpr std::uint32_t m = 8, n = 4096, k = 14336, ctas = 132;
  const std::uint64_t bytes = w8a16_gemm_m16_streamk_workspace_bytes(n, ctas);
  w8a16_gemm_m16_streamk(gpu, cache.kernel("w8a16_gemm_m16_streamk"), DevicePtr{kIn},
                         DevicePtr{kW}, DevicePtr{kS}, DevicePtr{kOut}, m, n, k, k, n,
                         StreamKWorkspace{DevicePtr{kWs}, bytes}, ctas, 0);
  CHECK(inner.tensor_maps.load() == 2);  // the weights' map and the activations'
  CHECK(inner.launches().size() == 1);
  CHECK(phase == METRALE_ERROR_CUDA);  // a failure from here on is the driver's
}
