// NVRTC compiles every embedded kernel for every target the library serves, with an
// empty log; a broken source yields an error carrying the NVRTC log and the options.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "metrale/embedded_sources.hpp"
#include "metrale/error.hpp"
#include "metrale/kernel_variants.hpp"
#include "metrale/nvrtc_compiler.hpp"

using namespace metrale;

namespace {
const char* const kTargets[] = {"sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"};
}

TEST_CASE("every kernel module compiles for sm_80..sm_120 with no warnings") {
  const auto supported = nvrtc_supported_targets();
  for (const KernelVariant& v : all_module_builds()) {
    for (const std::string target : kTargets) {
      CAPTURE(v.name);
      CAPTURE(target);
      REQUIRE(std::find(supported.begin(), supported.end(), target) != supported.end());
      const CompiledModule m = nvrtc_compile(compile_request(v, target));
      CHECK(m.is_cubin);
      CHECK(m.image.size() > 1000);
      CHECK_MESSAGE(m.log.empty(), m.log);
    }
  }
}

TEST_CASE("the embedded sources are the files in kernel_sources/") {
  CHECK(embedded_source("w8a16_gemm_m16.cu").find("w8a16_gemm_m16_n64") != std::string::npos);
  CHECK(embedded_source("metrale_device.cuh").find("mma.sync.aligned.m16n8k16") !=
        std::string::npos);
  CHECK_THROWS_WITH_AS(embedded_source("nope.cu"), doctest::Contains("no embedded kernel source"),
                       Error);
}

TEST_CASE("a compile error carries the NVRTC log line and the options") {
  const std::string broken =
      "extern \"C\" __global__ void k(int* p) { *p = undefined_symbol_xyz; }\n";
  try {
    nvrtc_compile(CompileRequest{"broken.cu", broken, {{"FOO", "3"}}, {}, "sm_90"});
    FAIL("expected a compile error");
  } catch (const Error& e) {
    const std::string what = e.what();
    CHECK(what.find("NVRTC failed to compile broken.cu for sm_90") != std::string::npos);
    CHECK(what.find("broken.cu(1): error: identifier \"undefined_symbol_xyz\" is undefined") !=
          std::string::npos);
    CHECK(what.find("--gpu-architecture=sm_90") != std::string::npos);
    CHECK(what.find("-DFOO=3") != std::string::npos);
  }
}

TEST_CASE("a token-split kernel compiles only as one of its two builds") {
  const KernelVariant& v = variant_named("w8a16_gemm_m16");
  REQUIRE(v.token_split);
  const std::vector<KernelVariant> builds = module_builds(v);
  REQUIRE(builds.size() == 2);
  CHECK(builds[0].name == "w8a16_gemm_m16.m8");
  CHECK(builds[1].name == "w8a16_gemm_m16.m16");
  CHECK_THROWS_WITH_AS(
      nvrtc_compile(compile_request(v, "sm_90")),
      doctest::Contains("build with TOKEN_GROUPS=1 (m <= 8) or TOKEN_GROUPS=2 (m in 9..16)"),
      Error);
  // The two builds are different code: one MMA per 8 tokens, or two.
  const auto ptx_of = [](const KernelVariant& b) {
    const CompiledModule m = nvrtc_compile(compile_request(b, "compute_90"));
    const std::string ptx(m.image.data());
    std::size_t mmas = 0;
    for (std::size_t at = ptx.find("mma.sync"); at != std::string::npos;
         at = ptx.find("mma.sync", at + 1)) {
      ++mmas;
    }
    return mmas;
  };
  CHECK(ptx_of(builds[1]) == 2 * ptx_of(builds[0]));
  CHECK(module_builds(variant_named("fill_random")).size() == 1);
}

TEST_CASE("compute_XY targets give PTX") {
  const KernelVariant v = module_builds(variant_named("w8a16_gemm_m16"))[0];
  const CompiledModule m = nvrtc_compile(compile_request(v, "compute_90"));
  CHECK_FALSE(m.is_cubin);
  const std::string ptx(m.image.data());
  CHECK(ptx.find("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32") != std::string::npos);
  CHECK(ptx.find(".global .align 4 .u32 M16_N_TILE = 32;") != std::string::npos);
  // The tensor-core kernels decode FP8 with integer moves and a BF16 FMA on every target.
  CHECK(ptx.find("fma.rn.bf16x2") != std::string::npos);
  CHECK(ptx.find("cvt.rn.f16x2.e4m3x2") == std::string::npos);
}

TEST_CASE("each module defines the kernels of its own entries and no other variant's") {
  // Modules that share a source (the skinny one: its chunked and its deep kernels) must
  // each hold only their own kernels, or a cold start compiles them twice.
  for (const KernelVariant& v : all_module_builds()) {
    CAPTURE(v.name);
    const CompiledModule m = nvrtc_compile(compile_request(v, "compute_90"));
    const std::string ptx(m.image.data());
    for (const KernelVariant& other : kernel_variants()) {
      for (const std::string& e : other.entries) {
        const std::string symbol(kernel_symbol_of(other, e));
        const bool own = v.name == other.name || v.name.starts_with(other.name + ".");
        CAPTURE(symbol);
        CHECK((ptx.find(".entry " + symbol + "(") != std::string::npos) == own);
      }
    }
  }
}

TEST_CASE("the reference decodes with the conversion instruction from sm_89, integers before") {
  const KernelVariant& v = variant_named("w8a16_gemv_batch16");
  const auto ptx_for = [&](const char* target) {
    const CompiledModule m = nvrtc_compile(compile_request(v, target));
    return std::string(m.image.data());
  };
  CHECK(ptx_for("compute_90").find("cvt.rn.f16x2.e4m3x2") != std::string::npos);
  CHECK(ptx_for("compute_80").find("e4m3x2") == std::string::npos);
}

TEST_CASE("--no-cache goes only to an NVRTC that knows it, 12.9 and later") {
  const CompileRequest request{"k.cu", "", {{"N", "1"}}, {"--extra"}, "sm_90"};
  const auto has_no_cache = [&](NvrtcVersion version) {
    const std::vector<std::string> o = nvrtc_options(request, version);
    return std::find(o.begin(), o.end(), "--no-cache") != o.end();
  };
  CHECK_FALSE(has_no_cache({11, 9}));
  CHECK_FALSE(has_no_cache({12, 8}));
  CHECK(has_no_cache({12, 9}));
  CHECK(has_no_cache({13, 0}));
  // Nothing else differs.
  std::vector<std::string> newer = nvrtc_options(request, {12, 9});
  std::erase(newer, "--no-cache");
  CHECK(newer == nvrtc_options(request, {12, 8}));
  // nvrtc_compile's options are those for the linked NVRTC.
  const NvrtcVersion linked = linked_nvrtc_version();
  CHECK(nvrtc_version() == std::to_string(linked.major) + "." + std::to_string(linked.minor));
  CHECK(nvrtc_options(request) == nvrtc_options(request, linked));
  CHECK(nvrtc_compile(compile_request(variant_named("fill_random"), "sm_90")).options ==
        nvrtc_options(compile_request(variant_named("fill_random"), "sm_90"), linked));
}

TEST_CASE("targets are normalised and junk is refused") {
  CHECK(normalize_target("sm_90") == "sm_90");
  CHECK(normalize_target("90") == "sm_90");
  CHECK(normalize_target("9.0") == "sm_90");
  CHECK(normalize_target("sm_120") == "sm_120");
  CHECK_THROWS_AS(normalize_target("hopper"), Error);
  CHECK_THROWS_AS(normalize_target("sm_9"), Error);
  CHECK(normalize_target("12.1") == "sm_121");
  for (const char* bad : {"1.0.0", "9.00", ".90", "90.", "9..0", "sm_9.0.0", ""}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(normalize_target(bad), Error);
  }
}
