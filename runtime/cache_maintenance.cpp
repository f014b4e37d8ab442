#include "metrale/cache_maintenance.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <ctime>
#include <optional>
#include <span>
#include <system_error>

#include "cache_entry.hpp"
#include "file_io.hpp"
#include "metrale/cache_key.hpp"
#include "metrale/error.hpp"

namespace metrale {
namespace {

// The format version `file` records where it is an entry of a version other than this
// library's.
std::optional<std::uint32_t> other_format_version(std::span<const char> file) {
  const std::optional<std::uint32_t> version = cache_entry_format_version(file);
  if (version == kCacheFormatVersion) return std::nullopt;
  return version;
}

// A bad entry, or one of another version where those go.
bool unwanted(const CacheFileInfo& f, OtherVersions other_versions) {
  return !f.temporary && (!f.problem.empty() ||
                          (f.other_version && other_versions == OtherVersions::remove));
}

// Removes the file scanned as `f`, if the name still holds it; an unlink that fails on
// it is counted in `failed`.
bool remove_file(const CacheFileInfo& f, RemovalFailures* failed) {
  int error = 0;
  if (remove_if_same_file(f.path, f.device, f.inode, &error)) return true;
  if (error != 0 && failed != nullptr) {
    if (failed->files++ == 0) {
      failed->first = f.path.string() + ": " + std::generic_category().message(error);
    }
  }
  return false;
}

}  // namespace

std::vector<CacheFileInfo> scan_cache(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) fail("cannot read kernel cache directory {}: {}", dir.string(), ec.message());
  const std::time_t now = std::time(nullptr);
  std::vector<CacheFileInfo> out;
  for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (ec) fail("cannot read kernel cache directory {}: {}", dir.string(), ec.message());
    const std::string name = it->path().filename().string();
    CacheFileInfo info;
    info.path = it->path();
    info.temporary = is_temporary_cache_file(name);
    if (!info.temporary && !name.ends_with(kCacheEntrySuffix)) continue;
    struct stat st {};
    if (::lstat(info.path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    info.bytes = static_cast<std::uint64_t>(st.st_size);
    info.device = static_cast<std::uint64_t>(st.st_dev);
    info.inode = static_cast<std::uint64_t>(st.st_ino);
    info.age_seconds = std::max<std::int64_t>(0, now - st.st_mtime);
    if (info.temporary) {
      info.problem = "unfinished write";
      out.push_back(std::move(info));
      continue;
    }
    info.key = name.substr(0, name.size() - kCacheEntrySuffix.size());
    FileRead file = read_whole_file(info.path);
    if (file.error != 0) {
      // Renamed over or trimmed by another process between listing and reading.
      if (file.error == ENOENT) continue;
      info.problem = "unreadable: " + std::generic_category().message(file.error);
    } else if (const auto version = other_format_version(file.bytes)) {
      info.other_version = true;
      info.format_version = *version;
    } else {
      const DecodedEntry decoded = decode_cache_entry(file.bytes, info.key);
      info.meta = decoded.meta;
      info.problem = decoded.problem;
    }
    out.push_back(std::move(info));
  }
  std::sort(out.begin(), out.end(), [](const CacheFileInfo& a, const CacheFileInfo& b) {
    if (a.age_seconds != b.age_seconds) return a.age_seconds > b.age_seconds;
    return a.path < b.path;
  });
  return out;
}

std::uint64_t remove_bad_entries(const std::vector<CacheFileInfo>& scanned,
                                 RemovalFailures* failed, OtherVersions other_versions) {
  std::uint64_t removed = 0;
  for (const CacheFileInfo& f : scanned) {
    if (unwanted(f, other_versions) && remove_file(f, failed)) ++removed;
  }
  return removed;
}

TrimResult trim_cache(const std::filesystem::path& dir, std::uint64_t max_bytes,
                      OtherVersions other_versions) {
  TrimResult result;
  std::vector<CacheFileInfo> kept;  // valid entries, oldest first (scan_cache's order)
  std::uint64_t total = 0;          // bytes of the entries still there
  for (CacheFileInfo& f : scan_cache(dir)) {
    const bool stale_temporary = f.temporary && f.age_seconds >= kStaleTemporarySeconds;
    const bool drop = unwanted(f, other_versions);
    if ((stale_temporary || drop) && remove_file(f, &result.failed)) {
      ++result.files_removed;
      result.bytes_removed += f.bytes;
      continue;
    }
    if (f.temporary) continue;  // a live write's, or one that could not be removed
    total += f.bytes;
    if (!drop) kept.push_back(std::move(f));  // one left is not tried twice
  }
  for (const CacheFileInfo& f : kept) {
    if (total <= max_bytes) break;
    if (remove_file(f, &result.failed)) {
      ++result.files_removed;
      result.bytes_removed += f.bytes;
      total -= f.bytes;
    }
  }
  result.bytes_left = total;
  return result;
}

}  // namespace metrale
