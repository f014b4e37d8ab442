// The driver table against a stand-in libcuda.so.1 (fake_libcuda.cpp), run by CTest with
// LD_LIBRARY_PATH at the fake, once per METRALE_FAKE_DRIVER mode: what the library makes
// of a driver that finds no device or will not tell its version, and that every entry is
// fetched at the ABI its cuda.h type has (a CUDA 13 driver serves a newer
// cuCtxSynchronize at 13000).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "c_api_internal.hpp"
#include "metrale/cuda_backend.hpp"
#include "metrale/error.hpp"
#include "metrale/kernels.h"
#include "metrale/log.hpp"

using namespace metrale;

namespace {

std::string mode() {
  const char* m = std::getenv("METRALE_FAKE_DRIVER");
  return m != nullptr ? m : "";
}

}  // namespace

// First in the file: the table loads once per process, at the first call that needs it.
TEST_CASE("the driver's version is logged when it loads, or why it could not be read") {
  std::ostringstream text;
  const std::shared_ptr<spdlog::logger> saved = logger();
  auto capture = std::make_shared<spdlog::logger>(
      "capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(text));
  capture->set_level(spdlog::level::debug);
  set_logger(capture);
  const std::string reason = cuda_unavailable_reason();
  set_logger(saved);
  const std::string log = text.str();
  if (mode() == "device") {
    CHECK(reason.empty());
    CHECK(log.find("CUDA driver loaded: version 13.0") != std::string::npos);
  }
  if (mode() == "no-version") {
    CHECK(reason.empty());  // the version only goes to the log
    CHECK(log.find("cuDriverGetVersion failed: CUDA_ERROR_FAKE") != std::string::npos);
    CHECK(log.find("version 0.0") == std::string::npos);
  }
}

TEST_CASE("a driver whose cuInit finds no device is a machine without a device") {
  if (mode() != "no-device") return;
  const std::string reason = cuda_unavailable_reason();
  CHECK(reason.starts_with("no CUDA device: cuInit found none (CUDA_ERROR_NO_DEVICE"));
  CHECK(reason.find("from the fake driver") != std::string::npos);  // the fake was loaded
  CHECK_THROWS_WITH_AS(CudaBackend(0), doctest::Contains("no CUDA device: cuInit found none"),
                       Error);
}

TEST_CASE("the backend comes up and synchronizes through the entries cuda.h declares") {
  if (mode() != "device") return;
  REQUIRE(cuda_unavailable_reason().empty());
  CudaBackend gpu(0);
  CHECK(gpu.info().name == "fake device");  // the fake was loaded
  CHECK(gpu.target() == "sm_90");
  // 2619 MHz x 2 transfers x 640 bytes of bus: the bandwidth the plan reads.
  CHECK(gpu.info().dram_gbps == 3352u);
  CHECK_NOTHROW(gpu.synchronize());
}

TEST_CASE("the C ABI refuses a bad argument before a first use compiles the kernel") {
  if (mode() != "device") return;
  setenv("METRALE_KERNEL_CACHE", "0", 1);  // every module compiled here, none stored
  metrale_service* s = nullptr;
  REQUIRE(metrale_service_create(0, &s) == METRALE_OK);
  const auto compiles = [&] { return s->service.cache().stats().compiles; };
  constexpr std::uint64_t in = 1ull << 40, w = 2ull << 40, sc = 3ull << 40, out = 4ull << 40;
  CHECK(metrale_w8a16_gemm_m16(s, in, w, sc, out, 0, 32, 128, nullptr) ==
        METRALE_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(metrale_last_error()).find("m=0") != std::string::npos);
  CHECK(metrale_w8a16_gemm_m16_strided(s, in, w, sc, in, 4, 96, 128, 136, 96, nullptr) ==
        METRALE_ERROR_INVALID_ARGUMENT);
  CHECK(metrale_w8a16_gemm_m16_skinny_deep(s, in, w, sc, w, 4, 4096, 4096, 4096, 4096,
                                           nullptr) == METRALE_ERROR_INVALID_ARGUMENT);
  CHECK(metrale_dense_ffn(s, 32, in, w, sc, out, 20, 32, 100, nullptr) ==
        METRALE_ERROR_INVALID_ARGUMENT);
  CHECK(metrale_qkv_projection(s, in, 130, w, sc, out, 128, 0, 64, 2, 128, nullptr) ==
        METRALE_ERROR_INVALID_ARGUMENT);
  CHECK(compiles() == 0);
  // Good arguments compile the kernel (which the fake driver then cannot load).
  CHECK(metrale_w8a16_gemm_m16(s, in, w, sc, out, 1, 32, 128, nullptr) != METRALE_OK);
  CHECK(compiles() == 1);
  metrale_service_destroy(s);
}

TEST_CASE("the mode is one the tests know") {
  CHECK_MESSAGE((mode() == "no-device" || mode() == "device" || mode() == "no-version"),
                "run through CTest, which sets METRALE_FAKE_DRIVER and LD_LIBRARY_PATH");
}
