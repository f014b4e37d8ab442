#include "metrale/module_cache.hpp"

#include <chrono>
#include <string>
#include <utility>

#include "metrale/embedded_sources.hpp"
#include "metrale/error.hpp"
#include "metrale/log.hpp"

namespace metrale {

struct ModuleCache::Loaded {
  std::string name;
  std::unique_ptr<LoadedModule> module;
  std::vector<std::pair<std::string, void*>> functions;
};

ModuleCache::ModuleCache(const GpuBackend& gpu, CompileFn compile)
    : gpu_(gpu), compile_(std::move(compile)), target_(gpu.target()) {}

ModuleCache::~ModuleCache() = default;

std::shared_ptr<const ModuleCache::Loaded> ModuleCache::build(const KernelVariant& variant) const {
  const auto start = std::chrono::steady_clock::now();
  CompileRequest request{variant.source, embedded_source(variant.source), variant.defines, {},
                         target_};
  CompiledModule compiled = compile_(request);
  auto loaded = std::make_shared<Loaded>();
  loaded->name = variant.name;
  loaded->module = gpu_.load_module(compiled.image, variant.name);
  for (const GlobalCheck& check : variant.checks) {
    const std::uint32_t value = loaded->module->read_global_u32(check.name);
    if (value != check.expected) {
      fail("module {}: kernel constant {} = {} but the host expects {}", variant.name,
           check.name, value, check.expected);
    }
  }
  for (const std::string& entry : variant.entries) {
    loaded->functions.emplace_back(entry, loaded->module->function(entry));
  }
  logger()->debug("module {} ready for {} in {:.1f} ms (compile {:.1f} ms)", variant.name,
                  target_,
                  std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                      .count(),
                  compiled.compile_ms);
  return loaded;
}

std::shared_ptr<const ModuleCache::Loaded> ModuleCache::module_for(const KernelVariant& variant) {
  Key key{gpu_.context(), variant.source, variant.defines, target_};
  std::promise<std::shared_ptr<const Loaded>> promise;
  std::shared_future<std::shared_ptr<const Loaded>> pending;
  {
    std::lock_guard lock(mutex_);
    auto it = modules_.find(key);
    if (it != modules_.end()) {
      hits_.fetch_add(1, std::memory_order_relaxed);
      pending = it->second;
    } else {
      modules_.emplace(key, promise.get_future().share());
    }
  }
  // Another thread owns this key: wait for its compile outside the lock.
  if (pending.valid()) return pending.get();
  try {
    auto loaded = build(variant);
    compiles_.fetch_add(1, std::memory_order_relaxed);
    promise.set_value(loaded);
    return loaded;
  } catch (...) {
    {
      std::lock_guard lock(mutex_);
      modules_.erase(key);  // a later call retries instead of replaying the failure
    }
    promise.set_exception(std::current_exception());
    throw;
  }
}

KernelHandle ModuleCache::kernel(const KernelVariant& variant, std::string_view entry) {
  auto loaded = module_for(variant);
  for (const auto& [name, fn] : loaded->functions) {
    if (name == entry) return KernelHandle{fn, gpu_.context(), name.c_str()};
  }
  std::string known;
  for (const auto& f : loaded->functions) known += (known.empty() ? "" : ", ") + f.first;
  fail("module {} has no entry {} (its entries: {})", variant.name, entry, known);
}

KernelHandle ModuleCache::kernel(std::string_view entry) {
  return kernel(variant_for_entry(entry), entry);
}

void ModuleCache::warm_up(std::span<const std::string> variant_names) {
  std::vector<const KernelVariant*> wanted;
  if (variant_names.empty()) {
    for (const KernelVariant& v : kernel_variants()) wanted.push_back(&v);
  } else {
    for (const std::string& n : variant_names) wanted.push_back(&variant_named(n));
  }
  std::vector<std::future<void>> jobs;
  for (const KernelVariant* v : wanted) {
    jobs.push_back(std::async(std::launch::async, [this, v] { module_for(*v); }));
  }
  for (auto& j : jobs) j.get();
}

ModuleCacheStats ModuleCache::stats() const {
  return {compiles_.load(std::memory_order_relaxed), hits_.load(std::memory_order_relaxed)};
}

}  // namespace metrale
