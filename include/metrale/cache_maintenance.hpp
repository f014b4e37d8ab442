// Inspection and upkeep of one kernel cache directory (`metrale cache`): list entries,
// verify every checksum, trim to a size oldest-first.
//
// Libraries of different versions may share a directory. An entry of another cache
// format version is theirs to judge: it is reported as such, counts as valid, and is
// removed as unwanted only where OtherVersions::remove asks.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "metrale/disk_cache.hpp"

namespace metrale {

struct CacheFileInfo {
  std::filesystem::path path;
  std::string key;            // from the file name; empty for a temporary file
  CacheEntryMeta meta;        // valid when problem is empty
  std::uint64_t bytes = 0;    // file size
  std::int64_t age_seconds = 0;  // since the last write
  bool temporary = false;     // an unfinished (or abandoned) write
  std::string problem;        // empty when the entry is valid
  // Written in another cache format version (problem empty, meta unknown).
  bool other_version = false;
  std::uint32_t format_version = 0;  // the one recorded, where other_version
  // The file scanned (st_dev, st_ino): a removal takes this file, not one another process
  // renamed to the same name since.
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
};

// Every entry and temporary file in `dir`, each fully verified (an entry of another
// format version only as far as its version), oldest first. Files that are neither are
// ignored. Throws Error when the directory cannot be read.
std::vector<CacheFileInfo> scan_cache(const std::filesystem::path& dir);

// Files a pass found but could not remove (an unlink refused, e.g. a read-only
// directory); a file another process removed or replaced meanwhile is not one of them.
struct RemovalFailures {
  std::uint64_t files = 0;
  std::string first;  // "PATH: reason" of the first such file
};

struct TrimResult {
  std::uint64_t files_removed = 0;
  std::uint64_t bytes_removed = 0;
  std::uint64_t bytes_left = 0;  // including the files that could not be removed
  RemovalFailures failed;
};

// A temporary file this old belongs to a writer that died: live writes take
// milliseconds.
inline constexpr std::int64_t kStaleTemporarySeconds = 600;

// What the passes below do with the entries of other cache format versions.
enum class OtherVersions { keep, remove };

// Removes bad entries and stale temporary files (and, with OtherVersions::remove, the
// entries of other format versions), then the oldest valid entries until the directory's
// entries total at most `max_bytes`.
TrimResult trim_cache(const std::filesystem::path& dir, std::uint64_t max_bytes,
                      OtherVersions other_versions = OtherVersions::keep);

// Removes every bad entry (and, with OtherVersions::remove, every entry of another format
// version); returns how many. Those it could not remove go to `failed` where given.
std::uint64_t remove_bad_entries(const std::vector<CacheFileInfo>& scanned,
                                 RemovalFailures* failed = nullptr,
                                 OtherVersions other_versions = OtherVersions::keep);

}  // namespace metrale
