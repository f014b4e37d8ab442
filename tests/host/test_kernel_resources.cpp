// ptxas's report of each kernel, read through NVRTC without a GPU: the parser on known
// reports and broken ones, the report of every shipped build against the limits the GPU
// tests check on the loaded modules, and a CUBIN that the report leaves as it was.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "metrale/error.hpp"
#include "metrale/kernel_resources.hpp"
#include "metrale/kernel_variants.hpp"
#include "metrale/nvrtc_compiler.hpp"
#include "support/kernel_limits.hpp"

using namespace metrale;

namespace {

// As ptxas of CUDA 13.0 prints it for an entry that calls a function it did not inline.
constexpr const char* kReport =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function 'first' for 'sm_90'\n"
    "ptxas info    : Function properties for helper\n"
    "ptxas         .     32 bytes stack frame, 24 bytes spill stores, 20 bytes spill loads\n"
    "ptxas info    : Function properties for first\n"
    "ptxas         .     256 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n"
    "ptxas info    : Used 92 registers, used 1 barriers, 288 bytes cumulative stack size, "
    "1024 bytes smem\n"
    "ptxas info    : Compile time = 24.737 ms\n"
    "ptxas info    : Compiling entry function 'second' for 'sm_90'\n"
    "ptxas info    : Function properties for second\n"
    "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 10 registers, used 0 barriers\n";

// The sections of an ELF64 file by name (a CUBIN is one); empty contents for NOBITS.
std::map<std::string, std::vector<char>> elf_sections(const std::vector<char>& image) {
  const auto read = [&](std::size_t at, auto value) {
    REQUIRE(at + sizeof(value) <= image.size());
    std::memcpy(&value, image.data() + at, sizeof(value));
    return value;
  };
  const auto shoff = read(0x28, std::uint64_t{});
  const auto shentsize = read(0x3a, std::uint16_t{});
  const auto shnum = read(0x3c, std::uint16_t{});
  const auto shstrndx = read(0x3e, std::uint16_t{});
  const auto header = [&](std::size_t i) { return shoff + i * shentsize; };
  const auto names = read(header(shstrndx) + 0x18, std::uint64_t{});
  std::map<std::string, std::vector<char>> out;
  for (std::size_t i = 0; i < shnum; ++i) {
    const auto name = read(header(i), std::uint32_t{});
    const auto type = read(header(i) + 4, std::uint32_t{});
    const auto offset = read(header(i) + 0x18, std::uint64_t{});
    const auto size = type == 8 ? 0 : read(header(i) + 0x20, std::uint64_t{});  // 8: NOBITS
    REQUIRE(offset + size <= image.size());
    out[std::string(image.data() + names + name)] =
        std::vector<char>(image.begin() + static_cast<std::ptrdiff_t>(offset),
                          image.begin() + static_cast<std::ptrdiff_t>(offset + size));
  }
  return out;
}

}  // namespace

TEST_CASE("the ptxas report parser reads each entry's own properties, not a callee's") {
  const std::vector<KernelResources> k = parse_ptxas_report(kReport);
  REQUIRE(k.size() == 2);
  CHECK(k[0].symbol == "first");
  CHECK(k[0].registers == 92);
  CHECK(k[0].stack_frame_bytes == 256);
  CHECK(k[0].spill_store_bytes == 8);
  CHECK(k[0].spill_load_bytes == 4);
  CHECK(k[0].barriers == 1);
  CHECK(k[0].shared_bytes == 1024);
  CHECK(k[1].symbol == "second");
  CHECK(k[1].registers == 10);
  CHECK(k[1].stack_frame_bytes == 0);
  CHECK(k[1].barriers == 0);
  CHECK(k[1].shared_bytes == 0);
  CHECK(parse_ptxas_report("").empty());
}

TEST_CASE("a ptxas report with a line missing or unreadable is refused") {
  const std::string report = kReport;
  const auto without = [&](const std::string& line) {
    const std::size_t at = report.find(line);
    REQUIRE(at != std::string::npos);
    return report.substr(0, at) + report.substr(report.find('\n', at) + 1);
  };
  const auto replaced = [&](const std::string& from, const std::string& to) {
    std::string r = report;
    r.replace(r.find(from), from.size(), to);
    return r;
  };
  CHECK_THROWS_WITH_AS(parse_ptxas_report(without("ptxas info    : Used 92")),
                       "ptxas report: no register line for first", Error);
  CHECK_THROWS_WITH_AS(parse_ptxas_report(without("ptxas info    : Used 10")),
                       "ptxas report: no register line for second", Error);
  CHECK_THROWS_WITH_AS(parse_ptxas_report(without("ptxas         .     256")),
                       "ptxas report: no stack and spill line for first", Error);
  CHECK_THROWS_WITH_AS(parse_ptxas_report(replaced("8 bytes spill stores", "x bytes spill stores")),
                       doctest::Contains("unreadable properties of first"), Error);
  CHECK_THROWS_WITH_AS(parse_ptxas_report(replaced("Used 92 registers", "Used many registers")),
                       doctest::Contains("unreadable register line"), Error);
  CHECK_THROWS_WITH_AS(parse_ptxas_report(replaced("'first'", "first")),
                       doctest::Contains("no entry name"), Error);
  CHECK_THROWS_WITH_AS(parse_ptxas_report("ptxas info    : Used 3 registers, used 0 barriers\n"),
                       doctest::Contains("a register line outside an entry"), Error);
}

TEST_CASE("a ptxas report cut at any length parses or is refused, never read past its end") {
  // Under the sanitizers (tests/sanitize.sh) a read past the text or the list fails here.
  const std::string report = kReport;
  int parsed = 0;
  int refused = 0;
  for (std::size_t length = 0; length <= report.size(); ++length) {
    try {
      const std::vector<KernelResources> k = parse_ptxas_report(report.substr(0, length));
      CHECK(k.size() <= 2);
      ++parsed;
    } catch (const Error& e) {
      CHECK(std::string(e.what()).starts_with("ptxas report: "));
      ++refused;
    }
  }
  // Whole lines before the first entry parse as no entry; most cuts inside an entry are
  // refused.
  CHECK(parsed > 0);
  CHECK(refused > parsed);
}

TEST_CASE("every shipped build keeps its register and local-memory limits on sm_90 (ptxas)") {
  // The same limits as the GPU test on the loaded modules (test_gpu_runtime.cpp), here on
  // every build machine; the table is what `metrale compile --resources` prints.
  for (const KernelVariant& build : all_module_builds()) {
    CAPTURE(build.name);
    const std::vector<KernelResources> kernels = kernel_resources(build, "sm_90");
    std::vector<std::string> symbols;
    for (const std::string& entry : build.entries) {
      const std::string symbol(kernel_symbol_of(build, entry));
      symbols.push_back(symbol);
      const auto k = std::find_if(kernels.begin(), kernels.end(),
                                  [&](const KernelResources& r) { return r.symbol == symbol; });
      REQUIRE_MESSAGE(k != kernels.end(), symbol, " is not in ptxas's report");
      INFO(entry, ": registers ", k->registers, ", stack ", k->stack_frame_bytes, " B");
      test::check_kernel_limits(entry, build.name.ends_with(".m16"), k->registers,
                                k->stack_frame_bytes);
      CHECK(k->spill_store_bytes == 0);
      CHECK(k->spill_load_bytes == 0);
    }
    for (const KernelResources& k : kernels) {
      CHECK_MESSAGE(std::find(symbols.begin(), symbols.end(), k.symbol) != symbols.end(),
                    k.symbol, " is in the report but is no entry's kernel");
    }
  }
}

TEST_CASE("asking for ptxas's report leaves the CUBIN's code as it was") {
  // Only the tool note, which records the options, may differ: the report describes the
  // very code the library loads.
  const KernelVariant& build =
      shipped_module_builds(variant_named("w8a16_gemm_m16_skinny_deep"))[1];
  CompileRequest request = compile_request(build, "sm_90");
  const CompiledModule plain = nvrtc_compile(request);
  request.ptxas_report = true;
  const CompiledModule reported = nvrtc_compile(request);
  CHECK(plain.ptxas_report.empty());
  CHECK(reported.ptxas_report.find("Compiling entry function") != std::string::npos);
  CHECK_MESSAGE(reported.log.empty(), reported.log);
  auto a = elf_sections(plain.image);
  auto b = elf_sections(reported.image);
  CHECK(a.count(".text.w8a16_gemm_m16_skinny_deep") == 1);
  a.erase(".note.nv.tkinfo");
  b.erase(".note.nv.tkinfo");
  CHECK(a.size() > 10);
  CHECK(a == b);
}
