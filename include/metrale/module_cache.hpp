// Compiled and loaded modules, keyed by (context, source, defines, target). Thread-safe:
// concurrent first uses of one key compile once while the others wait for it; later
// uses are hits that take one short lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "metrale/gpu_backend.hpp"
#include "metrale/kernel_variants.hpp"
#include "metrale/nvrtc_compiler.hpp"

namespace metrale {

struct ModuleCacheStats {
  std::uint64_t compiles = 0;  // modules compiled (misses)
  std::uint64_t hits = 0;      // lookups served by an already loaded module
};

class ModuleCache {
 public:
  // Produces the image for a request; defaults to nvrtc_compile. Tests substitute
  // their own to count or slow down compiles.
  using CompileFn = std::function<CompiledModule(const CompileRequest&)>;

  explicit ModuleCache(const GpuBackend& gpu, CompileFn compile = nvrtc_compile);
  ~ModuleCache();
  ModuleCache(const ModuleCache&) = delete;
  ModuleCache& operator=(const ModuleCache&) = delete;

  // The handle of `entry` in `variant`, compiling and loading the module on first use.
  KernelHandle kernel(const KernelVariant& variant, std::string_view entry);

  // Shorthand: the variant that carries `entry`.
  KernelHandle kernel(std::string_view entry);

  // Compiles and loads the named variants (all when empty) in parallel.
  void warm_up(std::span<const std::string> variant_names = {});

  ModuleCacheStats stats() const;
  const GpuBackend& backend() const { return gpu_; }

 private:
  struct Loaded;
  struct Key {
    ContextId context;
    std::string source;
    std::vector<Define> defines;
    std::string target;
    friend auto operator<=>(const Key&, const Key&) = default;
  };
  std::shared_ptr<const Loaded> module_for(const KernelVariant& variant);
  std::shared_ptr<const Loaded> build(const KernelVariant& variant) const;

  const GpuBackend& gpu_;
  CompileFn compile_;
  std::string target_;
  mutable std::mutex mutex_;
  std::map<Key, std::shared_future<std::shared_ptr<const Loaded>>> modules_;
  std::atomic<std::uint64_t> compiles_{0};
  std::atomic<std::uint64_t> hits_{0};
};

}  // namespace metrale
