// The CLI's commands. Each takes the arguments after its name, prints its own --help,
// and returns the process exit code.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace metrale {
class KernelService;
}

namespace metrale::cli {

struct Command {
  std::string_view name;
  std::string_view summary;
  int (*run)(int argc, char** argv);  // argv[0] is the command name
};

int cmd_info(int argc, char** argv);
int cmd_microtest(int argc, char** argv);
int cmd_startup(int argc, char** argv);

// The microtest on an existing service (also run by `info` when a GPU is present).
int run_microtest(KernelService& service, const std::vector<std::uint32_t>& ms,
                  std::uint32_t seed);

int cmd_bench(int argc, char** argv);
int cmd_compile(int argc, char** argv);
int cmd_cache(int argc, char** argv);
int cmd_plan(int argc, char** argv);

}  // namespace metrale::cli
