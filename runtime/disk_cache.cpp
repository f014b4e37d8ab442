#include "metrale/disk_cache.hpp"

#include <unistd.h>

#include <cerrno>
#include <exception>
#include <mutex>
#include <set>
#include <system_error>
#include <utility>

#include "cache_entry.hpp"
#include "file_io.hpp"
#include "metrale/error.hpp"
#include "metrale/log.hpp"

namespace metrale {
namespace {

// One warning per directory and cause per process, however many caches (one per GPU)
// meet it: a failure that repeats on every store (a full disk) is said once.
bool first_warning_for(const std::filesystem::path& dir, const std::string& cause = {}) {
  static std::mutex mutex;
  static std::set<std::string> warned;  // guarded by mutex
  std::lock_guard lock(mutex);
  return warned.insert(cause.empty() ? dir.string() : dir.string() + '\n' + cause).second;
}

// Errors that will not go away while the process runs; any other (a full disk, the
// directory removed, an I/O error) may, and costs only the one store.
bool refuses_writes_for_good(int error) {
  return error == EACCES || error == EPERM || error == EROFS;
}

// Missing files and missing directories are ordinary misses, not worth a word.
bool is_plain_miss(int error) { return error == ENOENT || error == ENOTDIR; }

}  // namespace

std::string cache_entry_file_name(const std::string& key) {
  return key + std::string(kCacheEntrySuffix);
}

DiskCache::DiskCache(DiskCacheConfig config) : config_(std::move(config)) {
  if (!config_.enabled || config_.directory.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(config_.directory, ec);
  if (ec) {
    warn_unwritable("cannot create it: " + ec.message());
    return;
  }
  if (::access(config_.directory.c_str(), W_OK | X_OK) != 0) {
    const int err = errno;
    warn_unwritable(std::generic_category().message(err));
    return;
  }
  writable_ = true;
}

void DiskCache::lose_writability(const std::string& why) {
  if (writable_.exchange(false)) warn_unwritable(why);
}

void DiskCache::warn_unwritable(const std::string& why) const {
  if (first_warning_for(config_.directory)) {
    logger()->warn(
        "kernel cache directory {} is not writable ({}); compiled kernels stay in memory "
        "for this process. Set METRALE_KERNEL_CACHE_DIR to a writable directory, or "
        "METRALE_KERNEL_CACHE=0 to silence this.",
        config_.directory.string(), why);
  }
}

std::optional<CachedImage> DiskCache::load_from(const std::filesystem::path& dir,
                                                const std::string& key, bool read_only) const {
  const std::filesystem::path path = dir / cache_entry_file_name(key);
  FileRead file = read_whole_file(path);
  if (file.error != 0) {
    if (!is_plain_miss(file.error)) {
      logger()->warn("cannot read kernel cache entry {}: {}", path.string(),
                     std::generic_category().message(file.error));
    }
    return std::nullopt;
  }
  const DecodedEntry decoded = decode_cache_entry(file.bytes, key);
  if (!decoded.ok()) {
    rejected_.fetch_add(1, std::memory_order_relaxed);
    if (read_only) {
      logger()->warn("kernel cache entry {} is bad ({}); skipping it (read-only layer)",
                     path.string(), decoded.problem);
    } else {
      logger()->warn("kernel cache entry {} is bad ({}); deleting it, the module will be "
                     "recompiled",
                     path.string(), decoded.problem);
      remove_if_same_file(path, file.device, file.inode);
    }
    return std::nullopt;
  }
  CachedImage out;
  out.meta = decoded.meta;
  out.path = path;
  out.read_only = read_only;
  out.device = file.device;
  out.inode = file.inode;
  out.image = std::move(file.bytes);
  out.image.erase(out.image.begin(),
                  out.image.begin() + static_cast<std::ptrdiff_t>(decoded.payload_offset));
  return out;
}

std::optional<CachedImage> DiskCache::load(const std::string& key) const {
  if (!config_.enabled) return std::nullopt;
  for (const std::filesystem::path& dir : config_.read_only_dirs) {
    if (auto hit = load_from(dir, key, true)) return hit;
  }
  return load_writable(key);
}

std::optional<CachedImage> DiskCache::load_writable(const std::string& key) const {
  if (!config_.enabled || config_.directory.empty()) return std::nullopt;
  return load_from(config_.directory, key, false);
}

bool DiskCache::store(const std::string& key, const CacheEntryMeta& meta,
                      std::span<const char> image) {
  if (!config_.enabled || config_.directory.empty() || !writable()) return false;
  // Nothing escapes: an entry not stored costs a later process a compile, while an
  // exception would fail the caller's kernel, which is already in memory.
  try {
    const std::vector<char> bytes = encode_cache_entry(key, meta, image);
    const std::string name = cache_entry_file_name(key);
    try {
      write_file_atomically(config_.directory, name, bytes);
    } catch (const FileError& e) {
      if (e.error() != ENOENT) throw;
      // The directory was removed since the cache opened it (a clean-up by hand or by a
      // tool); a long-running process makes it again rather than never store again.
      std::filesystem::create_directories(config_.directory);
      write_file_atomically(config_.directory, name, bytes);
    }
    return true;
  } catch (const FileError& e) {
    store_failed(e.error(), e.what());
  } catch (const std::filesystem::filesystem_error& e) {
    store_failed(e.code().value(), e.what());
  } catch (const std::exception& e) {
    store_failed(0, e.what());
  }
  return false;
}

void DiskCache::store_failed(int error, const std::string& why) {
  if (refuses_writes_for_good(error)) {
    lose_writability(why);
    return;
  }
  const std::string cause = error != 0 ? std::generic_category().message(error) : "other";
  if (first_warning_for(config_.directory, cause)) {
    logger()->warn("cannot store a kernel cache entry in {} ({}); the module stays in memory "
                   "for this process, and later stores are still tried. Further failures "
                   "of this kind are not logged.",
                   config_.directory.string(), why);
  }
}

bool DiskCache::discard(const CachedImage& entry) const {
  if (entry.read_only) return false;
  const bool removed = remove_if_same_file(entry.path, entry.device, entry.inode);
  if (removed) logger()->debug("deleted kernel cache entry {}", entry.path.string());
  return removed;
}

}  // namespace metrale
