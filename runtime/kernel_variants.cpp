#include "metrale/kernel_variants.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "metrale/embedded_sources.hpp"
#include "metrale/error.hpp"
#include "metrale/w8a16_gemm_m16.hpp"
#include "metrale/w8a16_gemm_m16_stream.hpp"

namespace metrale {

CompileRequest compile_request(const KernelVariant& variant, std::string target,
                               bool ptxas_report) {
  CompileRequest request{variant.source, embedded_source(variant.source), variant.defines, {},
                         std::move(target)};
  request.ptxas_report = ptxas_report;
  return request;
}

std::span<const KernelVariant> kernel_variants() {
  static const std::vector<KernelVariant> variants = {
      // One kernel, the strided one, for three entries: the contiguous entry passes its
      // pitches (k, n) and the split-K entry launches it in a cluster of S CTAs. Same
      // time as a kernel of its own (docs/startup.md), one module pair fewer to compile.
      {"w8a16_gemm_m16",
       "w8a16_gemm_m16.cu",
       {{"N_TILE", std::to_string(W8A16_GEMM_M16_N_TILE)}},
       {"w8a16_gemm_m16", "w8a16_gemm_m16_strided", "w8a16_gemm_m16_splitk"},
       {{"M16_N_TILE", W8A16_GEMM_M16_N_TILE}},
       true,
       "w8a16_gemm_m16_strided"},
      {"w8a16_gemm_m16_n64",
       "w8a16_gemm_m16.cu",
       {{"N_TILE", std::to_string(W8A16_GEMM_M16_N_TILE_WIDE)}},
       {"w8a16_gemm_m16_n64"},
       {{"M16_N_TILE_WIDE", W8A16_GEMM_M16_N_TILE_WIDE}},
       true},
      {"w8a16_gemm_m16_stream",
       "w8a16_gemm_m16_stream.cu",
       {},
       {"w8a16_gemm_m16_stream"},
       {{"M16_STREAM_STAGE_WEIGHT_BYTES", W8A16_GEMM_M16_STREAM_STAGE_WEIGHT_BYTES}},
       true},
      {"w8a16_gemm_m16_streamk", "w8a16_gemm_m16_streamk.cu", {}, {"w8a16_gemm_m16_streamk"}, {},
       true},
      // One source, two modules: the chunked kernels and the deep ones compile side by
      // side (SKINNY_KERNELS in the source).
      {"w8a16_gemm_m16_skinny",
       "w8a16_gemm_m16_skinny.cu",
       {{"SKINNY_KERNELS", "1"}},
       {"w8a16_gemm_m16_skinny", "w8a16_gemm_m16_skinny2"},
       {},
       true},
      {"w8a16_gemm_m16_skinny_deep",
       "w8a16_gemm_m16_skinny.cu",
       {{"SKINNY_KERNELS", "2"}},
       {"w8a16_gemm_m16_skinny_deep", "w8a16_gemm_m16_skinny_deep3"},
       {},
       true},
      // The deep kernel on 32 rows per CTA: one module, its 16-token build, for every m
      // (the plan takes it above 8 tokens only).
      {"w8a16_gemm_m16_skinny_deep32",
       "w8a16_gemm_m16_skinny.cu",
       {{"SKINNY_KERNELS", "4"}, {"TOKEN_GROUPS", "2"}},
       {"w8a16_gemm_m16_skinny_deep32"},
       {},
       false},
      // Likewise one kernel for the contiguous and the strided entry.
      {"w8a16_gemv_batch16",
       "w8a16_gemv_batch16.cu",
       {},
       {"w8a16_gemv_batch16", "w8a16_gemv_batch16_strided"},
       {},
       false,
       "w8a16_gemv_batch16_strided"},
      {"fill_random", "fill_random.cu", {}, {"fill_random_bf16", "fill_random_fp8", "fill_random_f32", "fill_u16"}, {}},
  };
  return variants;
}

// The lookups below run on launch paths (KernelService::kernel): the lists of known names
// are built only for the error.
const KernelVariant& variant_for_entry(std::string_view entry) {
  for (const KernelVariant& v : kernel_variants()) {
    for (const std::string& e : v.entries) {
      if (e == entry) return v;
    }
  }
  std::string known;
  for (const KernelVariant& v : kernel_variants()) {
    for (const std::string& e : v.entries) known += (known.empty() ? "" : ", ") + e;
  }
  fail("no kernel entry named {} (known entries: {})", entry, known);
}

const KernelVariant& variant_named(std::string_view name) {
  for (const KernelVariant& v : kernel_variants()) {
    if (v.name == name) return v;
  }
  for (const KernelVariant& v : kernel_variants()) {
    if (std::find(v.entries.begin(), v.entries.end(), name) != v.entries.end()) return v;
  }
  std::string known;
  for (const KernelVariant& v : kernel_variants()) known += (known.empty() ? "" : ", ") + v.name;
  fail("no kernel variant or entry named {} (known variants: {})", name, known);
}

std::string_view kernel_symbol_of(const KernelVariant& variant, std::string_view entry) {
  return variant.kernel_symbol.empty() ? entry : std::string_view(variant.kernel_symbol);
}

std::vector<KernelVariant> module_builds(const KernelVariant& variant) {
  if (!variant.token_split) return {variant};
  std::vector<KernelVariant> builds(2, variant);
  for (std::uint32_t groups : {1u, 2u}) {
    KernelVariant& b = builds[groups - 1];
    b.name += groups == 1 ? ".m8" : ".m16";
    b.defines.push_back({"TOKEN_GROUPS", std::to_string(groups)});
    b.token_split = false;
  }
  return builds;
}

std::span<const KernelVariant> shipped_module_builds(const KernelVariant& shipped) {
  static const std::vector<std::vector<KernelVariant>> builds = [] {
    std::vector<std::vector<KernelVariant>> out;
    for (const KernelVariant& v : kernel_variants()) out.push_back(module_builds(v));
    return out;
  }();
  const std::span<const KernelVariant> variants = kernel_variants();
  for (std::size_t i = 0; i < variants.size(); ++i) {
    if (&variants[i] == &shipped) return builds[i];
  }
  fail("variant {} is not one of kernel_variants()", shipped.name);
}

std::vector<KernelVariant> module_builds_named(std::span<const std::string> names) {
  if (names.empty()) return all_module_builds();
  std::vector<const KernelVariant*> variants;
  for (const std::string& n : names) {
    const KernelVariant* v = &variant_named(n);
    if (std::find(variants.begin(), variants.end(), v) == variants.end()) variants.push_back(v);
  }
  std::vector<KernelVariant> out;
  for (const KernelVariant* v : variants) {
    const std::span<const KernelVariant> builds = shipped_module_builds(*v);
    out.insert(out.end(), builds.begin(), builds.end());
  }
  return out;
}

std::vector<KernelVariant> all_module_builds() {
  std::vector<KernelVariant> out;
  for (const KernelVariant& v : kernel_variants()) {
    const std::span<const KernelVariant> builds = shipped_module_builds(v);
    out.insert(out.end(), builds.begin(), builds.end());
  }
  return out;
}

}  // namespace metrale
