// `metrale plan`: what the library runs for a shape. Prints, per shape and token count,
// the launch plan_m16_gemm picks without and with programmatic dependent launch, named as
// `metrale bench --entry` takes it, with the CTAs it launches and the workspace it needs.
// No GPU and no compile: the plan is a function of the shape, m and the SM count, so two
// builds' plans can be compared anywhere.
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
    "usage: metrale plan [--shape NxK]... [--m 1,8,16] [--sms N]\n\n"
    "Prints, per shape and m, the entry plan_m16_gemm picks for a caller without and with\n"
    "programmatic dependent launch (PDL), named as `metrale bench --entry` takes it, the\n"
    "CTAs its grid holds and the workspace bytes the launch needs (0: none). Needs no GPU\n"
    "and compiles nothing.\n\n"
    "  --shape NxK  a shape to plan (repeatable); default: the 13 decode shapes of\n"
    "               Llama-3-8B, Qwen3-32B and DeepSeek-V3 (K a multiple of 128)\n"
    "  --m LIST     token counts, each 1..16 (default 1,8,16)\n"
    "  --sms N      SMs of the device planned for (default 132: H100 and H200 SXM)\n";

std::string describe(const M16Plan& plan, std::uint32_t n, std::uint32_t k, std::uint32_t sms,
                     bool pdl) {
  const M16PlanGrid l = m16_plan_grid(plan, n, k);
  std::string text = bench::plan_entry_name(plan, k, sms) + (pdl ? "+pdl" : "");
  text += fmt::format(" ({} CTAs, workspace {})", l.ctas, l.workspace_bytes);
  return text;
}

}  // namespace

int cmd_plan(int argc, char** argv) {
  Args args(argc, argv, 1, {"help"}, {"shape", "m", "sms"});
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

  fmt::print("plan_m16_gemm on {} SMs: without PDL | with PDL\n", sms);
  for (const bench::Shape& s : shapes) {
    for (const std::uint32_t m : ms) {
      const M16Plan plain = plan_m16_gemm(m, s.n, s.k, sms);
      const M16Plan pdl = plan_m16_gemm(m, s.n, s.k, sms, M16LaunchOptions{true});
      fmt::print("{:<20} {:>5} x {:<5} m = {:>2}: {} | {}\n", s.model.empty() ? "" : s.label(),
                 s.n, s.k, m,
                 describe(plain, s.n, s.k, sms, false), describe(pdl, s.n, s.k, sms, true));
    }
  }
  return 0;
}

}  // namespace metrale::cli
