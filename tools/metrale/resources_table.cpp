#include "metrale/resources_table.hpp"

#include <fmt/format.h>

namespace metrale::cli {

void print_resources_table(const std::vector<ModuleResources>& modules) {
  fmt::print("{:<32} {:<8} {:<34} {:>4} {:>6} {:>6} {:>6} {:>4} {:>6}\n", "module", "target",
             "kernel", "regs", "stack", "spst", "spld", "bar", "smem");
  for (const ModuleResources& m : modules) {
    for (const KernelResources& k : m.kernels) {
      fmt::print("{:<32} {:<8} {:<34} {:>4} {:>6} {:>6} {:>6} {:>4} {:>6}\n", m.module, m.target,
                 k.symbol, k.registers, k.stack_frame_bytes, k.spill_store_bytes,
                 k.spill_load_bytes, k.barriers, k.shared_bytes);
    }
  }
  fmt::print("(as ptxas reports them: registers per thread; stack frame, spill stores and\n"
             " loads in bytes per thread; static shared memory in bytes per CTA)\n");
}

}  // namespace metrale::cli
