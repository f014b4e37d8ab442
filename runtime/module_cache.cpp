#include "metrale/module_cache.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <utility>

#include "metrale/cache_key.hpp"
#include "metrale/compile_target.hpp"
#include "metrale/error.hpp"
#include "metrale/log.hpp"

namespace metrale {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

bool is_nvrtc_compile(const ModuleCache::CompileFn& compile) {
  using Plain = CompiledModule (*)(const CompileRequest&);
  const Plain* target = compile.target<Plain>();
  return target != nullptr && *target == &nvrtc_compile;
}

}  // namespace

struct ModuleCache::Loaded {
  std::string name;
  std::unique_ptr<LoadedModule> module;
  std::vector<std::pair<std::string, void*>> functions;
};

ModuleCache::ModuleCache(const GpuBackend& gpu, CompileFn compile)
    : ModuleCache(gpu, compile,
                  is_nvrtc_compile(compile) ? DiskCacheConfig::from_environment()
                                            : DiskCacheConfig::disabled()) {}

ModuleCache::ModuleCache(const GpuBackend& gpu, CompileFn compile, DiskCacheConfig disk)
    : gpu_(gpu),
      compile_(std::move(compile)),
      target_(choose_compile_target(gpu.target()).target),
      disk_(std::make_unique<DiskCache>(std::move(disk))) {}

ModuleCache::~ModuleCache() {
  const ModuleCacheStats s = stats();
  if (s.compiles + s.disk_hits + s.hits == 0) return;
  logger()->debug(
      "module cache for {}: compiles {}, disk hits {}, disk misses {}, disk stores {}, "
      "rejected entries {}, memory hits {}",
      target_, s.compiles, s.disk_hits, s.disk_misses, s.disk_stores, s.disk_rejected, s.hits);
}

std::shared_ptr<const ModuleCache::Loaded> ModuleCache::load(const KernelVariant& variant,
                                                             std::span<const char> image) const {
  auto loaded = std::make_shared<Loaded>();
  loaded->name = variant.name;
  loaded->module = gpu_.load_module(image, variant.name);
  for (const GlobalCheck& check : variant.checks) {
    const std::uint32_t value = loaded->module->read_global_u32(check.name);
    if (value != check.expected) {
      fail("module {}: kernel constant {} = {} but the host expects {}", variant.name,
           check.name, value, check.expected);
    }
  }
  for (const std::string& entry : variant.entries) {
    loaded->functions.emplace_back(entry,
                                   loaded->module->function(kernel_symbol_of(variant, entry)));
  }
  return loaded;
}

std::shared_ptr<const ModuleCache::Loaded> ModuleCache::build(const KernelVariant& variant) {
  gpu_.check_not_capturing(variant.name);
  const auto start = Clock::now();
  const CompileRequest request = compile_request(variant, target_);
  std::string key;
  std::optional<CachedImage> cached;
  const char* disk_state = "off";
  if (disk_->enabled()) {
    key = cache_key(request);
    cached = disk_->load(key);
    disk_state = "miss";
  }
  // A read-only layer's image that does not load gives way to the writable directory's,
  // which a process that met the same failure compiled and stored: without it, every
  // process would recompile.
  for (int attempt = 0; cached && attempt < 2; ++attempt) {
    const double lookup_ms = ms_since(start);
    const auto load_start = Clock::now();
    try {
      auto loaded = load(variant, cached->image);
      disk_hits_.fetch_add(1, std::memory_order_relaxed);
      logger()->debug("module {} for {}: disk hit {} (lookup {:.2f} ms, load {:.2f} ms)",
                      variant.name, target_, cached->path.string(), lookup_ms,
                      ms_since(load_start));
      return loaded;
    } catch (const Error& e) {
      // Whether the image or the moment is at fault (a capture in progress, say) is
      // settled by loading a fresh compile below; the entry goes only if that works.
      logger()->warn("cached module {} ({}) failed to load: {}; recompiling it",
                     variant.name, cached->path.string(), e.what());
      disk_state = "rejected";
    }
    if (!cached->read_only) break;
    if (auto writable = disk_->load_writable(key)) {
      load_rejected_.fetch_add(1, std::memory_order_relaxed);
      cached = std::move(writable);
    } else {
      break;
    }
  }
  if (disk_->enabled()) disk_misses_.fetch_add(1, std::memory_order_relaxed);

  const auto compile_start = Clock::now();
  CompiledModule compiled = compile_(request);
  compiles_.fetch_add(1, std::memory_order_relaxed);
  const double compile_ms = ms_since(compile_start);
  const auto load_start = Clock::now();
  auto loaded = load(variant, compiled.image);
  const double load_ms = ms_since(load_start);

  if (cached) {
    load_rejected_.fetch_add(1, std::memory_order_relaxed);
    disk_->discard(*cached);
  }
  if (!key.empty()) {
    const CacheEntryMeta meta{target_, variant.name, compiled.is_cubin};
    if (disk_->store(key, meta, compiled.image)) {
      disk_stores_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  logger()->debug("module {} for {}: disk {}, compiled in {:.1f} ms, loaded in {:.1f} ms "
                  "({:.1f} ms in all)",
                  variant.name, target_, disk_state, compile_ms, load_ms, ms_since(start));
  return loaded;
}

std::shared_ptr<const ModuleCache::Loaded> ModuleCache::module_for(const KernelVariant& variant) {
  Key key{gpu_.context(), variant.source, variant.defines, target_, variant.entries,
          variant.kernel_symbol, variant.checks};
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
  return kernel_of(module_builds(variant), entry);
}

KernelHandle ModuleCache::kernel_of(std::span<const KernelVariant> builds, std::string_view entry) {
  KernelHandle handle;
  for (std::size_t b = 0; b < builds.size(); ++b) {
    auto loaded = module_for(builds[b]);
    const auto it = std::find_if(loaded->functions.begin(), loaded->functions.end(),
                                 [&](const auto& f) { return f.first == entry; });
    if (it == loaded->functions.end()) {
      std::string known;
      for (const auto& f : loaded->functions) known += (known.empty() ? "" : ", ") + f.first;
      fail("module {} has no entry {} (its entries: {})", builds[b].name, entry, known);
    }
    if (b == 0) {
      handle = KernelHandle{it->second, gpu_.context(), it->first.c_str()};
    } else {
      handle.function_above8 = it->second;
    }
  }
  return handle;
}

std::optional<KernelHandle> ModuleCache::resolved(std::string_view entry) {
  std::lock_guard lock(mutex_);
  const auto it = resolved_.find(entry);
  if (it == resolved_.end()) return std::nullopt;
  // As many hits as the lookups of its modules would have counted.
  hits_.fetch_add(it->second.builds, std::memory_order_relaxed);
  return it->second.handle;
}

KernelHandle ModuleCache::kernel(std::string_view entry) {
  if (const std::optional<KernelHandle> handle = resolved(entry)) return *handle;
  const std::span<const KernelVariant> builds = shipped_module_builds(variant_for_entry(entry));
  const KernelHandle handle = kernel_of(builds, entry);
  std::lock_guard lock(mutex_);
  resolved_.try_emplace(std::string(entry),
                        Resolved{handle, static_cast<std::uint32_t>(builds.size())});
  return handle;
}

void ModuleCache::warm_up(std::span<const std::string> variant_names) {
  const std::vector<KernelVariant> wanted = module_builds_named(variant_names);
  std::vector<std::future<void>> jobs;
  for (const KernelVariant& v : wanted) {
    jobs.push_back(std::async(std::launch::async, [this, &v] { module_for(v); }));
  }
  for (auto& j : jobs) j.get();
}

ModuleCacheStats ModuleCache::stats() const {
  ModuleCacheStats s;
  s.compiles = compiles_.load(std::memory_order_relaxed);
  s.hits = hits_.load(std::memory_order_relaxed);
  s.disk_hits = disk_hits_.load(std::memory_order_relaxed);
  s.disk_misses = disk_misses_.load(std::memory_order_relaxed);
  s.disk_stores = disk_stores_.load(std::memory_order_relaxed);
  s.disk_rejected = load_rejected_.load(std::memory_order_relaxed) + disk_->rejected();
  return s;
}

}  // namespace metrale
