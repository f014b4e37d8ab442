// Compiled and loaded modules, keyed by (context, source, defines, target) and by what
// the load resolves and checks (entries, kernel symbol, constants). Thread-safe:
// concurrent first uses of one key compile once while the others wait for it; later uses
// are hits that take one short lock.
//
// Between the memory cache and the compiler sits the persistent disk cache
// (disk_cache.hpp): a module not loaded yet is looked up on disk first, and a fresh
// compile is written back. A cached image that fails to load is deleted and compiled
// again, once; only when the fresh image fails to load too is the error the caller's.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "metrale/disk_cache.hpp"
#include "metrale/gpu_backend.hpp"
#include "metrale/kernel_variants.hpp"
#include "metrale/nvrtc_compiler.hpp"

namespace metrale {

struct ModuleCacheStats {
  std::uint64_t compiles = 0;       // calls of the compile function (NVRTC compiles)
  std::uint64_t hits = 0;           // lookups served by an already loaded module (memory)
  std::uint64_t disk_hits = 0;      // modules loaded from the disk cache
  std::uint64_t disk_misses = 0;    // disk lookups that found no usable entry
  std::uint64_t disk_stores = 0;    // entries written to the disk cache
  std::uint64_t disk_rejected = 0;  // entries found corrupt or failing to load (healed)
};

class ModuleCache {
 public:
  // Produces the image for a request; defaults to nvrtc_compile. Tests substitute
  // their own to count or slow down compiles.
  using CompileFn = std::function<CompiledModule(const CompileRequest&)>;

  // The disk cache follows the environment (DiskCacheConfig::from_environment) when
  // `compile` is nvrtc_compile. A substitute compile function's images are not what the
  // cache key describes, so with one the disk cache is off unless configured
  // explicitly below.
  explicit ModuleCache(const GpuBackend& gpu, CompileFn compile = nvrtc_compile);
  ModuleCache(const GpuBackend& gpu, CompileFn compile, DiskCacheConfig disk);
  ~ModuleCache();
  ModuleCache(const ModuleCache&) = delete;
  ModuleCache& operator=(const ModuleCache&) = delete;

  // The handle of `entry` in `variant`, compiling and loading its modules on first use
  // (both builds of a token-split variant, function and function_above8).
  KernelHandle kernel(const KernelVariant& variant, std::string_view entry);

  // Shorthand: the variant that carries `entry`.
  KernelHandle kernel(std::string_view entry);

  // The handle kernel(entry) has resolved before, if it has: a lookup that compiles and
  // loads nothing (counted as kernel(entry)'s hits are).
  std::optional<KernelHandle> resolved(std::string_view entry);

  // Compiles and loads the named variants' modules (all when empty; an entry name stands
  // for its variant) in parallel.
  void warm_up(std::span<const std::string> variant_names = {});

  ModuleCacheStats stats() const;
  const GpuBackend& backend() const { return gpu_; }

  // What NVRTC compiles for: the device's sm_XY, or compute_XY PTX when this NVRTC
  // predates the device (see compile_target.hpp).
  const std::string& compile_target() const { return target_; }
  const DiskCache& disk_cache() const { return *disk_; }

 private:
  struct Loaded;
  // A loaded module holds the functions of its variant's entries and has passed its
  // variant's checks: another variant of the same image with other entries, symbol or
  // checks is another module, or it would get this one's functions unchecked.
  struct Key {
    ContextId context;
    std::string source;
    std::vector<Define> defines;
    std::string target;
    std::vector<std::string> entries;
    std::string kernel_symbol;
    std::vector<GlobalCheck> checks;
    friend auto operator<=>(const Key&, const Key&) = default;
  };
  std::shared_ptr<const Loaded> module_for(const KernelVariant& variant);
  // The handle of `entry` from the modules of one variant (module_builds): the first
  // gives `function`, a second `function_above8`.
  KernelHandle kernel_of(std::span<const KernelVariant> builds, std::string_view entry);
  std::shared_ptr<const Loaded> build(const KernelVariant& variant);
  std::shared_ptr<const Loaded> load(const KernelVariant& variant,
                                     std::span<const char> image) const;

  const GpuBackend& gpu_;
  CompileFn compile_;
  std::string target_;
  std::unique_ptr<DiskCache> disk_;
  mutable std::mutex mutex_;
  std::map<Key, std::shared_future<std::shared_ptr<const Loaded>>> modules_;
  // kernel(entry)'s handles once their modules are loaded (they stay loaded for the cache's
  // life), with the module builds each stands for: a launch path's lookup without a key.
  struct Resolved {
    KernelHandle handle;
    std::uint32_t builds;
  };
  std::map<std::string, Resolved, std::less<>> resolved_;
  std::atomic<std::uint64_t> compiles_{0};
  std::atomic<std::uint64_t> hits_{0};
  std::atomic<std::uint64_t> disk_hits_{0};
  std::atomic<std::uint64_t> disk_misses_{0};
  std::atomic<std::uint64_t> disk_stores_{0};
  std::atomic<std::uint64_t> load_rejected_{0};
};

}  // namespace metrale
