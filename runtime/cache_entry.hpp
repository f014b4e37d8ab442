// The layout of one cache entry file. All integers little-endian.
//
//   offset  size  field
//        0     8  magic "MTRLKERN"
//        8     4  format version (kCacheFormatVersion)
//       12     4  flags (bit 0: the payload is PTX, not a CUBIN)
//       16    32  key (SHA-256, raw)
//       48     8  payload length
//       56     2  target length T
//       58     2  label length L
//       60     4  reserved, 0
//       64     T  target, then L bytes of label
//   64+T+L    32  checksum: SHA-256 of every byte before it and of the payload
//   96+T+L     *  payload (the image)
//
// The exact file size follows from the header, so a cut-short or padded file is caught
// before the checksum is even computed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "metrale/disk_cache.hpp"

namespace metrale {

inline constexpr std::string_view kCacheEntrySuffix = ".mkc";
inline constexpr std::size_t kEntryFixedHeader = 64;
inline constexpr std::size_t kEntryChecksumBytes = 32;

// Throws Error when `key` is not 64 hex digits or a field does not fit its length.
std::vector<char> encode_cache_entry(const std::string& key, const CacheEntryMeta& meta,
                                     std::span<const char> payload);

struct DecodedEntry {
  std::string problem;  // empty when the entry is valid
  std::string key;      // hex, as recorded in the file
  CacheEntryMeta meta;
  std::size_t payload_offset = 0;
  std::size_t payload_size = 0;
  bool ok() const { return problem.empty(); }
};

// Checks everything: magic, version, lengths, exact size and checksum. With
// `expected_key` non-empty, a different recorded key is a problem too.
DecodedEntry decode_cache_entry(std::span<const char> file, const std::string& expected_key = {});

// The format version a file records after the magic, whatever the version (the one part
// of the layout every version keeps); nullopt for a file without the magic.
std::optional<std::uint32_t> cache_entry_format_version(std::span<const char> file);

// Whether a directory entry is an unfinished write (see write_file_atomically).
bool is_temporary_cache_file(const std::string& file_name);

}  // namespace metrale
