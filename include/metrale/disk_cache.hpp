// The persistent cache of compiled kernel images. One self-validating file per entry
// (see runtime/cache_entry.hpp), named by its key (cache_key.hpp), written to a
// temporary file in the same directory and renamed into place, so readers never see a
// partial entry and take no lock. Read-only directories (METRALE_KERNEL_CACHE_PATH) are
// consulted before the writable one, so an image can ship a warm cache.
//
// Nothing here throws for a bad or missing file: a corrupt entry is logged and, in the
// writable directory, deleted; a directory that refuses writes (permission, read-only
// file system) gives one warning per process and leaves the cache read-only (memory
// only, from the module cache's point of view). A store that fails otherwise (a full
// disk) fails alone, and a writable directory removed meanwhile is made again.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace metrale {

struct DiskCacheConfig {
  bool enabled = false;
  std::filesystem::path directory;                   // writable; empty = none
  std::vector<std::filesystem::path> read_only_dirs;  // consulted first, in order

  // METRALE_KERNEL_CACHE=0 (or off/false/no) disables everything. The writable
  // directory is METRALE_KERNEL_CACHE_DIR, else $XDG_CACHE_HOME/metrale/kernels, else
  // $HOME/.cache/metrale/kernels; METRALE_KERNEL_CACHE_PATH lists read-only
  // directories separated by ':'.
  static DiskCacheConfig from_environment();
  static DiskCacheConfig disabled() { return {}; }
  static DiskCacheConfig at(std::filesystem::path directory,
                            std::vector<std::filesystem::path> read_only_dirs = {});
};

// The writable directory the environment names, ignoring METRALE_KERNEL_CACHE; empty
// when neither variable nor HOME gives one.
std::filesystem::path default_cache_directory();

// What an entry records besides its image, for `metrale cache list`.
struct CacheEntryMeta {
  std::string target;  // the compile target, e.g. "sm_90" or "compute_120"
  std::string label;   // the module name
  bool is_cubin = true;
};

struct CachedImage {
  std::vector<char> image;
  CacheEntryMeta meta;
  std::filesystem::path path;
  bool read_only = false;  // found in a read-only layer
  // The file that was read, so that discarding it never removes a newer entry another
  // process renamed into place meanwhile.
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
};

class DiskCache {
 public:
  explicit DiskCache(DiskCacheConfig config);
  DiskCache(const DiskCache&) = delete;
  DiskCache& operator=(const DiskCache&) = delete;

  bool enabled() const { return config_.enabled; }
  // Whether stores still go to disk: false once the directory could not be made when the
  // cache opened it, or a write was refused for good (permission, read-only file system).
  bool writable() const { return writable_.load(std::memory_order_relaxed); }
  const DiskCacheConfig& config() const { return config_; }

  // The entry for `key` (64 hex digits) from the first layer that holds a valid one.
  // Bad entries are logged; those in the writable directory are deleted.
  std::optional<CachedImage> load(const std::string& key) const;

  // The entry for `key` in the writable directory only (for an image from a read-only
  // layer that did not load).
  std::optional<CachedImage> load_writable(const std::string& key) const;

  // Writes the entry atomically into the writable directory; false when it was not
  // written (disabled, unwritable, or this write failed: one warning per cause per
  // process). Never throws.
  bool store(const std::string& key, const CacheEntryMeta& meta, std::span<const char> image);

  // Deletes the file `entry` came from when it lies in the writable directory and is
  // still that same file. Returns whether a file was removed.
  bool discard(const CachedImage& entry) const;

  // Number of entries found bad and deleted (or skipped, in a read-only layer).
  std::uint64_t rejected() const { return rejected_.load(std::memory_order_relaxed); }

 private:
  std::optional<CachedImage> load_from(const std::filesystem::path& dir, const std::string& key,
                                       bool read_only) const;
  void lose_writability(const std::string& why);
  void store_failed(int error, const std::string& why);
  void warn_unwritable(const std::string& why) const;

  DiskCacheConfig config_;
  std::atomic<bool> writable_{false};
  mutable std::atomic<std::uint64_t> rejected_{0};
};

// File name of the entry for `key` inside a cache directory.
std::string cache_entry_file_name(const std::string& key);

}  // namespace metrale
