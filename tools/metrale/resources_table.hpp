// The table of what ptxas made of each kernel, as `metrale compile --resources` and the
// main job without a device print it.
#pragma once

#include <string>
#include <vector>

#include "metrale/kernel_resources.hpp"

namespace metrale::cli {

struct ModuleResources {
  std::string module;
  std::string target;
  std::vector<KernelResources> kernels;
};

// One row per kernel, module by module, then a line naming the units.
void print_resources_table(const std::vector<ModuleResources>& modules);

}  // namespace metrale::cli
