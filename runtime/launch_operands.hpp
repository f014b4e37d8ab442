// What every W8A16 launcher packs the same way: the operands each kernel takes first,
// in its parameter order, and the K split over a cluster.
#pragma once

#include <cstdint>

#include "metrale/kernel_launch.hpp"
#include "metrale/m16_launch_options.hpp"

namespace metrale {

// input, weight, block_scale, output, m, n, k.
inline KernelLaunch& push_operands(KernelLaunch& launch, DevicePtr input, DevicePtr weight,
                                   DevicePtr block_scale, DevicePtr output, std::uint32_t m,
                                   std::uint32_t n, std::uint32_t k) {
  return launch.arg_ptr(input)
      .arg_ptr(weight)
      .arg_ptr(block_scale)
      .arg_ptr(output)
      .arg_u32(m)
      .arg_u32(n)
      .arg_u32(k);
}

// `split` CTAs per tile along grid y: a one-CTA split needs no cluster (the kernel then
// sees a cluster of one); PDL as the caller asks.
inline KernelLaunch& split_over_cluster(KernelLaunch& launch, std::uint32_t split,
                                        M16LaunchOptions options) {
  if (split > 1) launch.cluster({1, split, 1});
  return launch.programmatic_dependent(options.programmatic_dependent);
}

}  // namespace metrale
