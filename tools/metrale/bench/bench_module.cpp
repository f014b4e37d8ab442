#include "metrale/bench/bench_module.hpp"

#include "metrale/error.hpp"
#include "metrale/nvrtc_compiler.hpp"

namespace metrale::bench {
namespace {

std::string_view bench_source(std::string_view name) {
  std::string known;
  for (const EmbeddedSource& s : bench_embedded_sources()) {
    if (s.name == name) return s.text;
    known += (known.empty() ? "" : ", ") + std::string(s.name);
  }
  fail("no embedded benchmark source named {} (embedded: {})", name, known);
}

}  // namespace

BenchModule::BenchModule(const CudaBackend& gpu, std::string_view source)
    : gpu_(gpu), source_(source) {
  const CompiledModule compiled =
      nvrtc_compile(CompileRequest{source_, bench_source(source_), {}, {}, gpu.target()});
  compile_ms_ = compiled.compile_ms;
  module_ = gpu.load_module(compiled.image, source_);
}

KernelHandle BenchModule::kernel(std::string_view entry) {
  void* fn = module_->function(entry);
  names_.push_back(std::make_unique<std::string>(entry));
  return KernelHandle{fn, gpu_.context(), names_.back()->c_str()};
}

}  // namespace metrale::bench
