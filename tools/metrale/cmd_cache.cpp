// `metrale cache`: lists, verifies and trims a kernel cache directory.
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "metrale/args.hpp"
#include "metrale/cache_maintenance.hpp"
#include "metrale/commands.hpp"
#include "metrale/disk_cache.hpp"
#include "metrale/error.hpp"

namespace metrale::cli {
namespace {

constexpr const char* kHelp =
    "usage: metrale cache [--dir DIR] list\n"
    "       metrale cache [--dir DIR] verify [--delete-bad [--include-other-versions]]\n"
    "       metrale cache [--dir DIR] trim --max-bytes N [--include-other-versions]\n\n"
    "Inspects the persistent kernel cache.\n"
    "  list     every entry: key, target, kind, module, size, age, status\n"
    "  verify   checks every entry's checksum; exits 1 when one is bad\n"
    "  trim     removes bad entries, abandoned temporary files, then the oldest entries\n"
    "           until the directory holds at most N bytes (suffixes K, M, G: powers of 1024);\n"
    "           exits 1 when a file it meant to remove could not be (e.g. no write permission)\n"
    "Entries of other cache format versions, valid for the library versions sharing the\n"
    "directory that wrote them, are reported as such and not deleted as bad; trim counts\n"
    "them, and removes them oldest first like any entry when over N.\n\n"
    "  --dir DIR      the cache directory (default: METRALE_KERNEL_CACHE_DIR, else\n"
    "                 $XDG_CACHE_HOME/metrale/kernels, else ~/.cache/metrale/kernels)\n"
    "  --delete-bad   verify: also delete the bad entries (they would be rebuilt anyway)\n"
    "  --max-bytes N  trim: the size to trim to\n"
    "  --include-other-versions\n"
    "                 verify --delete-bad, trim: also delete every entry of another cache\n"
    "                 format version\n";

std::uint64_t parse_size(const std::string& text) {
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t multiplier = 1;
  std::string digits = text;
  if (!digits.empty() && std::isalpha(static_cast<unsigned char>(digits.back()))) {
    switch (std::toupper(static_cast<unsigned char>(digits.back()))) {
      case 'K': multiplier = 1ull << 10; break;
      case 'M': multiplier = 1ull << 20; break;
      case 'G': multiplier = 1ull << 30; break;
      default: usage_fail("--max-bytes: '{}' is not a size (N, NK, NM or NG)", text);
    }
    digits.pop_back();
  }
  std::uint64_t value = 0;
  usage_ensure(!digits.empty(), "--max-bytes: '{}' is not a size (N, NK, NM or NG)", text);
  for (char c : digits) {
    usage_ensure(std::isdigit(static_cast<unsigned char>(c)) != 0,
                 "--max-bytes: '{}' is not a size (N, NK, NM or NG)", text);
    const auto digit = static_cast<std::uint64_t>(c - '0');
    // A size that wraps would trim to what is left of it, as little as nothing.
    usage_ensure(value <= (kMax - digit) / 10, "--max-bytes: '{}' is over 2^64 - 1 bytes", text);
    value = value * 10 + digit;
  }
  usage_ensure(value <= kMax / multiplier, "--max-bytes: '{}' is over 2^64 - 1 bytes", text);
  return value * multiplier;
}

std::string human_age(std::int64_t s) {
  if (s < 120) return fmt::format("{}s", s);
  if (s < 120 * 60) return fmt::format("{}m", s / 60);
  if (s < 48 * 3600) return fmt::format("{}h", s / 3600);
  return fmt::format("{}d", s / 86400);
}

std::string human_bytes(std::uint64_t b) {
  if (b < 10 * 1024) return fmt::format("{} B", b);
  if (b < 10 * 1024 * 1024) return fmt::format("{:.1f} KiB", static_cast<double>(b) / 1024);
  return fmt::format("{:.1f} MiB", static_cast<double>(b) / (1024 * 1024));
}

int list(const std::vector<CacheFileInfo>& files) {
  fmt::print("{:<16} {:<12} {:<5} {:<22} {:>10} {:>6}  {}\n", "key", "target", "kind", "module",
             "bytes", "age", "status");
  std::uint64_t total = 0;
  int bad = 0;
  int other = 0;
  int temporary = 0;
  for (const CacheFileInfo& f : files) {
    total += f.bytes;
    if (f.temporary) {
      ++temporary;
      fmt::print("{:<16} {:<12} {:<5} {:<22} {:>10} {:>6}  {}\n", "(temporary)", "", "", "",
                 f.bytes, human_age(f.age_seconds), f.path.filename().string());
      continue;
    }
    if (f.other_version) {
      ++other;
      fmt::print("{:<16} {:<12} {:<5} {:<22} {:>10} {:>6}  other version (format {})\n",
                 f.key.substr(0, 16), "", "", "", f.bytes, human_age(f.age_seconds),
                 f.format_version);
      continue;
    }
    bad += f.problem.empty() ? 0 : 1;
    fmt::print("{:<16} {:<12} {:<5} {:<22} {:>10} {:>6}  {}\n", f.key.substr(0, 16),
               f.meta.target, f.problem.empty() ? (f.meta.is_cubin ? "cubin" : "ptx") : "",
               f.meta.label, f.bytes, human_age(f.age_seconds),
               f.problem.empty() ? "ok" : "BAD: " + f.problem);
  }
  fmt::print("{} entr{}, {} ({} bad, {}{} temporary)\n", files.size() - temporary,
             files.size() - temporary == 1 ? "y" : "ies", human_bytes(total), bad,
             other > 0 ? fmt::format("{} of other versions, ", other) : "", temporary);
  return 0;
}

int verify(const std::vector<CacheFileInfo>& files, bool delete_bad,
           OtherVersions other_versions) {
  std::size_t entries = 0;
  std::size_t bad = 0;
  std::size_t other = 0;
  for (const CacheFileInfo& f : files) {
    if (f.temporary) continue;
    ++entries;
    other += f.other_version ? 1 : 0;
    if (!f.problem.empty()) {
      ++bad;
      fmt::print("BAD {}: {}\n", f.path.string(), f.problem);
    }
  }
  const bool delete_other = delete_bad && other_versions == OtherVersions::remove;
  if (bad == 0) {
    fmt::print("{} entr{} verified, all valid", entries, entries == 1 ? "y" : "ies");
  } else {
    fmt::print("{} of {} entries bad", bad, entries);
  }
  if (other > 0) {
    fmt::print(" ({} of other cache format versions{})", other, delete_other ? "" : ", kept");
  }
  RemovalFailures failed;
  if (delete_bad && (bad > 0 || (delete_other && other > 0))) {
    fmt::print(", {} deleted", remove_bad_entries(files, &failed, other_versions));
  }
  fmt::print("\n");
  if (failed.files > 0) {
    fmt::print(stderr, "metrale: error: cache verify: {} entr{} could not be deleted ({})\n",
               failed.files, failed.files == 1 ? "y" : "ies", failed.first);
  }
  return bad > 0 || failed.files > 0 ? 1 : 0;
}

}  // namespace

int cmd_cache(int argc, char** argv) {
  Args args(argc, argv, 1, {"help", "delete-bad", "include-other-versions"},
            {"dir", "max-bytes"});
  if (args.has("help")) {
    fmt::print("{}", kHelp);
    return 0;
  }
  usage_ensure(!args.positional().empty(), "cache: give one action: list, verify or trim");
  usage_ensure(args.positional().size() == 1, "cache: unexpected argument '{}'",
               args.positional().size() > 1 ? args.positional()[1] : std::string());
  const std::string action = args.positional().front();
  usage_ensure(action == "list" || action == "verify" || action == "trim",
               "cache: unknown action '{}' (list, verify or trim)", action);
  usage_ensure(action == "trim" || !args.has("max-bytes"), "--max-bytes belongs to trim");
  usage_ensure(action == "verify" || !args.has("delete-bad"), "--delete-bad belongs to verify");
  usage_ensure(action == "trim" || args.has("delete-bad") || !args.has("include-other-versions"),
               "--include-other-versions belongs to trim and verify --delete-bad");
  const OtherVersions other_versions =
      args.has("include-other-versions") ? OtherVersions::remove : OtherVersions::keep;
  // Options are checked before the directory is looked at, so that a bad value is an
  // error whether or not a cache exists yet.
  usage_ensure(action != "trim" || args.has("max-bytes"), "trim needs --max-bytes N");
  const std::uint64_t max_bytes =
      action == "trim" ? parse_size(*args.value("max-bytes")) : std::uint64_t{0};
  const std::filesystem::path dir =
      args.has("dir") ? std::filesystem::path(*args.value("dir")) : default_cache_directory();
  ensure(!dir.empty(), "cache: no --dir given and no cache location in the environment");
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    fmt::print("no kernel cache at {}\n", dir.string());
    return 0;
  }
  fmt::print("kernel cache {}\n", dir.string());
  if (action == "list") return list(scan_cache(dir));
  if (action == "verify") {
    return verify(scan_cache(dir), args.has("delete-bad"), other_versions);
  }
  const TrimResult r = trim_cache(dir, max_bytes, other_versions);
  fmt::print("removed {} file(s), {}; {} left (limit {})\n", r.files_removed,
             human_bytes(r.bytes_removed), human_bytes(r.bytes_left), human_bytes(max_bytes));
  if (r.failed.files > 0) {
    fmt::print(stderr, "metrale: error: cache trim: {} file(s) could not be removed ({})\n",
               r.failed.files, r.failed.first);
    return 1;
  }
  return 0;
}

}  // namespace metrale::cli
