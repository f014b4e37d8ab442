// What the library costs on the host: one launcher call, and the NVRTC compile of each
// kernel variant at start-up.
#pragma once

#include <vector>

#include "metrale/bench/graph_timer.hpp"
#include "metrale/bench/results.hpp"
#include "metrale/cuda_backend.hpp"
#include "metrale/module_cache.hpp"

namespace metrale::bench {

// Median host time of one w8a16_gemm_m16 launcher call into `stream` (guards, argument
// packing and the driver launch), over `batches` batches of `batch` calls on a problem
// small enough that the GPU keeps up; the stream is drained between batches so the
// driver's launch queue never fills and blocks a call. The same calls into a backend
// that launches nothing give the library's own part (guards and argument packing). The
// same for the w8a16_gemm_m16_streamk launcher, and one tensor-map encode by the driver.
LaunchCost measure_launch_cost(const CudaBackend& gpu, ModuleCache& cache, const Stream& stream,
                               std::uint32_t batches = 1000, std::uint32_t batch = 100);

// nvrtc_compile time and image size of every library variant for the device's target.
std::vector<CompileTime> measure_compile_times(const CudaBackend& gpu);

}  // namespace metrale::bench
