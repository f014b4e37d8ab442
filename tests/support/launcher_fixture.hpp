// What the launcher tests share: fake device addresses, the message of the Error a call
// throws, and a recording backend with a module cache whose compiles are counted.
#pragma once

#include <string>
#include <string_view>

#include "metrale/error.hpp"
#include "metrale/module_cache.hpp"
#include "metrale/w8a16_gemm_m16_auto.hpp"
#include "support/fake_backend.hpp"

namespace metrale::test {

// Aligned, non-null fake device addresses, 1 TiB apart so that no operand of a test's
// shape reaches the next: nothing is ever dereferenced.
inline constexpr DevicePtr kIn(1ull << 40), kW(2ull << 40), kS(3ull << 40), kOut(4ull << 40),
    kWs(5ull << 40);

// The message of the Error `call` throws, or "<no error>".
std::string error_of(auto&& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

struct LauncherFixture {
  RecordingBackend gpu;
  CountingCompiler compiler;
  ModuleCache cache{gpu, compiler.fn()};
  const KernelLookup kernels = kernel_lookup(cache);
};

}  // namespace metrale::test
