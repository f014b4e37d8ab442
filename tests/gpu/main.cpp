// GPU test runner. Where no CUDA device is usable it runs nothing, prints how many test
// cases it skipped and why, and exits 77 so CTest reports the test as skipped.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "metrale/cuda_backend.hpp"

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const std::string reason = metrale::cuda_unavailable_reason();
  if (!reason.empty()) {
    context.setOption("test-case-exclude", "*");
    context.run();
    std::printf("SKIPPED: every GPU test case (see the count above): %s\n", reason.c_str());
    return 77;
  }
  return context.run();
}
