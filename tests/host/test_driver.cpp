// The driver is opened at run time: without libcuda.so.1 every binary still starts and
// creating a backend fails with a clear error instead of a crash.
#include <doctest/doctest.h>

#include <string>

#include "metrale/cuda_backend.hpp"
#include "metrale/error.hpp"

using namespace metrale;

TEST_CASE("a missing driver or device is reported cleanly") {
  const std::string reason = cuda_unavailable_reason();
  if (reason.empty()) {
    // A driver and a device are here: the backend comes up and names its target.
    CudaBackend gpu(0);
    CHECK(gpu.target().starts_with("sm_"));
    CHECK(cuda_device_target(0) == gpu.target());
    CHECK_THROWS_WITH_AS(CudaBackend(1000), doctest::Contains("CUDA device 1000 does not exist"),
                         Error);
    CHECK_THROWS_WITH_AS(cuda_device_target(1000),
                         doctest::Contains("CUDA device 1000 does not exist"), Error);
  } else {
    MESSAGE("no usable CUDA device here: ", reason);
    CHECK((reason.starts_with("no CUDA driver: libcuda.so.1 not found") ||
           reason.starts_with("no CUDA device")));
    const std::string prefix = reason.substr(0, 20);
    CHECK_THROWS_WITH_AS(CudaBackend(0), doctest::Contains(prefix.c_str()), Error);
    CHECK_THROWS_WITH_AS(cuda_device_target(0), doctest::Contains(prefix.c_str()), Error);
  }
}
