// metrale: the library's command-line tool. With no command it runs `info`, the main
// job: report the device, compile every kernel for it (or for sm_90 without one), and
// print compile times, CUBIN sizes and per-entry resources.
#include <array>
#include <cstdio>
#include <exception>
#include <string_view>

#include <fmt/format.h>

#include "metrale/args.hpp"
#include "metrale/commands.hpp"
#include "metrale/error.hpp"

namespace {

using metrale::cli::Command;

constexpr std::array kCommands = {
    Command{"info", "device report and compile of every kernel (the default)",
            metrale::cli::cmd_info},
    Command{"startup", "time the service's start-up: compile or load every kernel variant",
            metrale::cli::cmd_startup},
    Command{"microtest", "the dense-FFN launcher on the FFN shapes, held to the accuracy budget",
            metrale::cli::cmd_microtest},
    Command{"bench", "time the entries against the HBM ceiling and cuBLAS; check each result",
            metrale::cli::cmd_bench},
    Command{"compile", "fill a kernel cache directory ahead of time; dump PTX / CUBIN",
            metrale::cli::cmd_compile},
    Command{"cache", "list, verify or trim the persistent kernel cache",
            metrale::cli::cmd_cache},
    Command{"plan", "the entry the library plans for a shape and m, with and without PDL",
            metrale::cli::cmd_plan},
};

void print_usage() {
  fmt::print(
      "usage: metrale [COMMAND] [OPTIONS]\n\n"
      "Runtime-compiled FP8-weight / BF16-activation decode GEMMs for NVIDIA GPUs.\n\n"
      "commands:\n");
  for (const Command& c : kCommands) fmt::print("  {:<10} {}\n", c.name, c.summary);
  fmt::print(
      "\n`metrale COMMAND --help` describes a command's options.\n"
      "Exit status: 0 done, 1 failed, 2 a usage error (unknown command or option, missing\n"
      "or bad value; the message and a pointer to --help go to stderr).\n"
      "Environment: METRALE_LOG_LEVEL (trace|debug|info|warn|error|critical|off, default warn),\n"
      "METRALE_FFN_M16_TC_NTILE (unset|32|64),\n"
      "METRALE_KERNEL_CACHE_DIR, METRALE_KERNEL_CACHE_PATH, METRALE_KERNEL_CACHE=0\n"
      "(the persistent kernel cache: see `metrale cache --help`).\n");
}

}  // namespace

int main(int argc, char** argv) {
  // The command whose --help a usage error points to: info where none is named.
  std::string_view command = "info";
  try {
    std::string_view first = argc > 1 ? std::string_view(argv[1]) : std::string_view();
    if (first == "--help" || first == "-h" || first == "help") {
      print_usage();
      return 0;
    }
    if (first.empty() || first.starts_with("-")) {
      // No command: the main job, with any options passed through (-q included, so that
      // it is refused as an unknown option of info rather than as a command).
      return metrale::cli::cmd_info(argc, argv);
    }
    for (const Command& c : kCommands) {
      if (c.name == first) {
        command = c.name;
        return c.run(argc - 1, argv + 1);
      }
    }
    fmt::print(stderr, "metrale: error: unknown command '{}' (see metrale --help)\n", first);
    return 2;
  } catch (const metrale::cli::UsageError& e) {
    // A mistake in the command line: exit 2, not the 1 of a run that failed.
    fmt::print(stderr, "metrale: error: {} (see metrale {} --help)\n", e.what(), command);
    return 2;
  } catch (const metrale::Error& e) {
    fmt::print(stderr, "metrale: error: {}\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "metrale: internal error: {}\n", e.what());
    return 1;
  }
}
