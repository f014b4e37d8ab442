// `metrale microtest`: the dense-FFN launcher selected by METRALE_FFN_M16_TC_NTILE on the
// FFN shapes of the models the library targets, for m = 1, 8, 16, each output held
// against the scalar reference with the accuracy budget. Exits 1 on any failure.
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "metrale/args.hpp"
#include "metrale/commands.hpp"
#include "metrale/dense_ffn.hpp"
#include "metrale/error.hpp"
#include "metrale/fill_random.hpp"
#include "metrale/kernel_service.hpp"
#include "metrale/oracle.hpp"
#include "metrale/w8a16_gemv_batch16.hpp"

namespace metrale::cli {
namespace {

constexpr const char* kHelp =
    "usage: metrale microtest [--device N] [--m 1,8,16] [--seed S]\n\n"
    "Runs the dense-FFN launcher chosen by METRALE_FFN_M16_TC_NTILE (unset|32 ->\n"
    "w8a16_gemm_m16, 64 -> w8a16_gemm_m16_n64) on the FFN shapes of Llama-3-8B, Qwen3-32B\n"
    "and DeepSeek-V3 with fresh random operands, checks every output against the scalar\n"
    "reference w8a16_gemv_batch16 with within_m16_tc_budget, and prints shape, m, entry,\n"
    "max ULP, max abs error and the verdict. Exit status 1 if any output fails.\n\n"
    "  --device N    CUDA device ordinal (default 0)\n"
    "  --m LIST      rows to test (default 1,8,16; each in 1..16)\n"
    "  --seed S      first random seed (default 1)\n";

struct FfnShape {
  const char* name;
  std::uint32_t n, k;
};

constexpr FfnShape kShapes[] = {
    {"Llama-3-8B gate_up", 28672, 4096},  {"Llama-3-8B down", 4096, 14336},
    {"Qwen3-32B gate_up", 51200, 5120},   {"Qwen3-32B down", 5120, 25600},
    {"DeepSeek-V3 gate_up", 36864, 7168}, {"DeepSeek-V3 down", 7168, 18432},
};

}  // namespace

int run_microtest(KernelService& service, const std::vector<std::uint32_t>& ms,
                  std::uint32_t seed) {
  CudaBackend& gpu = service.backend();
  ModuleCache& cache = service.cache();
  const M16TcKernel sel = service.ffn_kernel();
  const KernelHandle reference = cache.kernel("w8a16_gemv_batch16");
  constexpr std::uint16_t kPoison = 0xFFFF;  // a BF16 NaN: unwritten outputs fail
  fmt::print("{:<22} {:>13} {:>3} {:<20} {:>8} {:>11} {:>8}\n", "shape", "N x K", "m", "entry",
             "max ULP", "max |err|", "verdict");
  bool all_ok = true;
  for (const FfnShape& s : kShapes) {
    DeviceBuffer input(gpu, std::size_t{16} * s.k * 2);
    DeviceBuffer weight(gpu, std::size_t{s.n} * s.k);
    DeviceBuffer scale(gpu, std::size_t{(s.n + 127) / 128} * (s.k / 128) * 4);
    DeviceBuffer out(gpu, std::size_t{16} * s.n * 2);
    DeviceBuffer ref(gpu, std::size_t{16} * s.n * 2);
    for (std::uint32_t m : ms) {
      ensure(m >= 1 && m <= 16, "microtest: m={} outside 1..16", m);
      ++seed;
      fill_random_bf16(cache, input.get(), 16 * s.k, seed * 3 + 1, 1.0f);
      fill_random_fp8(cache, weight.get(), static_cast<std::uint32_t>(weight.size()),
                      seed * 3 + 2, 0x7E);
      fill_random_f32(cache, scale.get(), static_cast<std::uint32_t>(scale.size() / 4),
                      seed * 3 + 3, 1.0f / 1024, 1.0f / 64);
      fill_u16(cache, out.get(), 16 * s.n, kPoison);
      fill_u16(cache, ref.get(), 16 * s.n, kPoison);
      sel.launcher(gpu, sel.kernel, input.get(), weight.get(), scale.get(), out.get(), m, s.n,
                   s.k, 0);
      w8a16_gemv_batch16(gpu, reference, input.get(), weight.get(), scale.get(), ref.get(), m,
                         s.n, s.k, 0);
      std::vector<std::uint16_t> got(std::size_t{m} * s.n), want(got.size());
      gpu.download(got.data(), out.get(), got.size() * 2);
      gpu.download(want.data(), ref.get(), want.size() * 2);
      BudgetReport report;
      for (std::uint32_t i = 0; i < m; ++i) {
        check_row_budget(report, got.data() + std::size_t{i} * s.n,
                         want.data() + std::size_t{i} * s.n, s.n, s.k, i);
      }
      all_ok = all_ok && report.ok();
      fmt::print("{:<22} {:>13} {:>3} {:<20} {:>8} {:>11.3g} {:>8}\n", s.name,
                 fmt::format("{}x{}", s.n, s.k), m, sel.kernel.name, report.max_ulp,
                 report.max_abs, report.ok() ? "ok" : "FAIL");
      if (!report.ok()) {
        fmt::print("  {} of {} outputs outside the budget; first: {}\n", report.failures,
                   report.checked, report.first_failure);
      }
    }
  }
  fmt::print("microtest: {}\n", all_ok ? "every output within budget" : "FAILED");
  return all_ok ? 0 : 1;
}

int cmd_microtest(int argc, char** argv) {
  Args args(argc, argv, 1, {"help"}, {"device", "m", "seed"});
  if (args.has("help")) {
    fmt::print("{}", kHelp);
    return 0;
  }
  args.refuse_positional("microtest");
  // Checked before the service exists: a bad argument is refused without a GPU.
  const int device = parse_device(args);
  const std::vector<std::uint32_t> ms = parse_token_counts(args);
  const std::uint32_t seed = parse_one_u32(args, "seed", 1);
  KernelService service(device);
  return run_microtest(service, ms, seed);
}

}  // namespace metrale::cli
