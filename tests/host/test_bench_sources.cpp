// The benchmark's own kernels (tools/metrale/bench/*.cu) compile with NVRTC for sm_90, the
// target the benchmark runs on, with an empty log: a broken one would otherwise surface only
// when a GPU run reaches it.
#include <doctest/doctest.h>

#include <span>
#include <string>

#include "metrale/embedded_sources.hpp"
#include "metrale/nvrtc_compiler.hpp"

namespace metrale {
std::span<const EmbeddedSource> bench_embedded_sources();
}  // namespace metrale

using namespace metrale;

TEST_CASE("every benchmark kernel source compiles for sm_90 with no warnings") {
  const std::span<const EmbeddedSource> sources = bench_embedded_sources();
  REQUIRE(sources.size() >= 5);
  for (const EmbeddedSource& s : sources) {
    CAPTURE(std::string(s.name));
    const CompiledModule m = nvrtc_compile(CompileRequest{std::string(s.name), s.text, {}, {},
                                                          "sm_90"});
    CHECK(m.is_cubin);
    CHECK(m.image.size() > 1000);
    CHECK_MESSAGE(m.log.empty(), m.log);
  }
}
