#include "metrale/cache_fill.hpp"

#include <string>

#include "metrale/cache_key.hpp"
#include "metrale/nvrtc_compiler.hpp"

namespace metrale {

CacheFill compile_through_cache(DiskCache& cache, const KernelVariant& variant,
                                std::string_view target, bool ptxas_report) {
  const CompileRequest request = compile_request(variant, std::string(target), ptxas_report);
  CacheFill out;
  const std::string key = cache.enabled() ? cache_key(request) : std::string();
  if (!key.empty()) {
    if (auto hit = cache.load(key)) {
      out.image = std::move(hit->image);
      out.from_cache = true;
      return out;
    }
  }
  CompiledModule compiled = nvrtc_compile(request);
  out.image = std::move(compiled.image);
  out.ptxas_report = std::move(compiled.ptxas_report);
  if (!key.empty()) {
    out.stored = cache.store(key, CacheEntryMeta{std::string(target), variant.name,
                                                 compiled.is_cubin},
                             out.image);
  }
  return out;
}

}  // namespace metrale
