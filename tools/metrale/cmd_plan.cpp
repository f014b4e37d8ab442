// `metrale plan`: what the library runs for a shape. Prints, per shape and token count,
// the launch plan_m16_gemm picks without and with programmatic dependent launch, named as
// `metrale bench --entry` takes it, with the CTAs it launches and the workspace it needs.
// No GPU and no compile: the plan is a function of the shape, m, the SM count and the DRAM
// bandwidth, so two builds' plans can be compared anywhere.
#include <string>
#include <vector>

#include <fmt/format.h>

#include "metrale/args.hpp"
#include "metrale/bench/plan_name.hpp"
#include "metrale/bench/shapes.hpp"
#include "metrale/commands.hpp"
#include "metrale/error.hpp"
#include "metrale/m16_plan.hpp"
#include "metrale/m16_plan_grid.hpp"

namespace metrale::cli {
namespace {

constexpr const char* kHelp =
    "usage: metrale plan [--shape NxK]... [--m 1,8,16] [--sms N] [--dram-gbps N]\n\n"
    "Prints, per shape and m, the entry plan_m16_gemm picks for a caller without and with\n"
    "programmatic dependent launch (PDL), named as `metrale bench --entry` takes it, the\n"
    "CTAs its grid holds and the workspace bytes the launch needs (0: none). Needs no GPU\n"
    "and compiles nothing.\n\n"
    "  --shape NxK  a shape to plan (repeatable); default: the 13 decode shapes of\n"
    "               Llama-3-8B, Qwen3-32B and DeepSeek-V3 (K a multiple of 128)\n"
    "  --m LIST     token counts, each 1..16 (default 1,8,16)\n"
    "  --sms N      SMs of the device planned for (default 132: H100 and H200 SXM)\n"
    "  --dram-gbps N  its peak DRAM bandwidth in GB/s, as `metrale info` reports it (an\n"
    "               H100 80GB HBM3: 3352); default 0, not known: planned as an H200\n";

std::string describe(const M16Plan& plan, std::uint32_t n, std::uint32_t k, std::uint32_t sms,
                     bool pdl) {
  const M16PlanGrid l = m16_plan_grid(plan, n, k);
  std::string text = bench::plan_entry_name(plan, k, sms) + (pdl ? "+pdl" : "");
  text += fmt::format(" ({} CTAs, workspace {})", l.ctas, l.workspace_bytes);
  return text;
}

}  // namespace

int cmd_plan(int argc, char** argv) {
  Args args(argc, argv, 1, {"help"}, {"shape", "m", "sms", "dram-gbps"});
  if (args.has("help")) {
    fmt::print("{}", kHelp);
    return 0;
  }
  args.refuse_positional("plan");
  const std::vector<bench::Shape> shapes =
      as_usage([&] { return bench::shapes_or_default(args.values("shape")); });
  const std::vector<std::uint32_t> ms = parse_token_counts(args);
  const std::uint32_t sms = parse_one_u32(args, "sms", 132);
  usage_ensure(sms >= 1, "--sms: {} SMs; the plan needs at least one", sms);
  const M16PlanDevice device{sms, parse_one_u32(args, "dram-gbps", 0)};

  if (device.dram_gbps == 0) {
    fmt::print("plan_m16_gemm on {} SMs: without PDL | with PDL\n", sms);
  } else {
    fmt::print("plan_m16_gemm on {} SMs, {} GB/s of DRAM: without PDL | with PDL\n", sms,
               device.dram_gbps);
  }
  for (const bench::Shape& s : shapes) {
    for (const std::uint32_t m : ms) {
      const M16Plan plain = plan_m16_gemm(m, s.n, s.k, device);
      const M16Plan pdl = plan_m16_gemm(m, s.n, s.k, device, M16LaunchOptions{true});
      fmt::print("{:<20} {:>5} x {:<5} m = {:>2}: {} | {}\n", s.model.empty() ? "" : s.label(),
                 s.n, s.k, m,
                 describe(plain, s.n, s.k, sms, false), describe(pdl, s.n, s.k, sms, true));
    }
  }
  return 0;
}

}  // namespace metrale::cli
