// What ptxas reports of each kernel it compiles (NVRTC with `--ptxas-options=-v`):
// registers, stack frame, spills, barriers and static shared memory. It is what the
// driver reports of the loaded CUBIN, read without a GPU, so that registers and local
// memory are checked on every build machine (tests/host/test_kernel_resources.cpp) and
// a tuning point's are read before it is timed (`metrale compile --resources`).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "metrale/kernel_variants.hpp"

namespace metrale {

struct KernelResources {
  std::string symbol;         // the kernel's name in the module
  int registers = 0;          // per thread
  int stack_frame_bytes = 0;  // local memory per thread: spills and local arrays
  int spill_store_bytes = 0;
  int spill_load_bytes = 0;
  int barriers = 0;
  int shared_bytes = 0;       // static shared memory
};

// The entry functions of a ptxas verbose report, in its order. Throws Error for an entry
// whose properties or register line are missing or unreadable.
std::vector<KernelResources> parse_ptxas_report(std::string_view report);

// Compiles `build` (one module: an element of module_builds) for `target`, an sm_XY, with
// the report asked for, and returns its kernels' resources.
std::vector<KernelResources> kernel_resources(const KernelVariant& build,
                                              const std::string& target);

}  // namespace metrale
