// The driver table against a stand-in libcuda.so.1 (fake_libcuda.cpp), run by CTest with
// LD_LIBRARY_PATH at the fake, once per METRALE_FAKE_DRIVER mode: what the library makes
// of a driver that finds no device, and that every entry is fetched at the ABI its
// cuda.h type has (a CUDA 13 driver serves a newer cuCtxSynchronize at 13000).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include "metrale/cuda_backend.hpp"
#include "metrale/error.hpp"

using namespace metrale;

namespace {

std::string mode() {
  const char* m = std::getenv("METRALE_FAKE_DRIVER");
  return m != nullptr ? m : "";
}

}  // namespace

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
  CHECK_NOTHROW(gpu.synchronize());
}

TEST_CASE("the mode is one the tests know") {
  CHECK_MESSAGE((mode() == "no-device" || mode() == "device"),
                "run through CTest, which sets METRALE_FAKE_DRIVER and LD_LIBRARY_PATH");
}
