// What the launcher tests share: the message of the Error a call throws, and a recording
// backend with a module cache whose compiles are counted.
#pragma once

#include <string>
#include <string_view>

#include "metrale/error.hpp"
#include "metrale/module_cache.hpp"
#include "metrale/w8a16_gemm_m16_auto.hpp"
#include "support/fake_backend.hpp"

namespace metrale::test {

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
