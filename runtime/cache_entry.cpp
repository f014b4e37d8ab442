#include "cache_entry.hpp"

#include <cstdint>
#include <cstring>
#include <string_view>

#include "metrale/cache_key.hpp"
#include "metrale/error.hpp"
#include "sha256.hpp"

namespace metrale {
namespace {

constexpr std::string_view kMagic = "MTRLKERN";
constexpr std::uint32_t kFlagPtx = 1;

void put_le(std::vector<char>& out, std::size_t offset, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) {
    out[offset + static_cast<std::size_t>(i)] = static_cast<char>((value >> (8 * i)) & 0xFF);
  }
}

std::uint64_t get_le(std::span<const char> in, std::size_t offset, int bytes) {
  std::uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) {
    value |= std::uint64_t{static_cast<std::uint8_t>(in[offset + static_cast<std::size_t>(i)])}
             << (8 * i);
  }
  return value;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

Sha256Digest parse_key(const std::string& key) {
  Sha256Digest raw{};
  ensure(key.size() == 64, "cache key '{}' is not 64 hex digits", key);
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const int hi = hex_digit(key[2 * i]);
    const int lo = hex_digit(key[2 * i + 1]);
    ensure(hi >= 0 && lo >= 0, "cache key '{}' is not 64 lower-case hex digits", key);
    raw[i] = static_cast<std::uint8_t>(hi * 16 + lo);
  }
  return raw;
}

std::span<const std::uint8_t> as_bytes(std::span<const char> s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

Sha256Digest checksum(std::span<const char> head, std::span<const char> payload) {
  return Sha256().update(as_bytes(head)).update(as_bytes(payload)).finish();
}

}  // namespace

std::vector<char> encode_cache_entry(const std::string& key, const CacheEntryMeta& meta,
                                     std::span<const char> payload) {
  const Sha256Digest raw_key = parse_key(key);
  ensure(meta.target.size() <= 0xFFFF && meta.label.size() <= 0xFFFF,
         "cache entry metadata too long");
  const std::size_t head = kEntryFixedHeader + meta.target.size() + meta.label.size();
  std::vector<char> out(head + kEntryChecksumBytes + payload.size(), 0);
  std::memcpy(out.data(), kMagic.data(), kMagic.size());
  put_le(out, 8, kCacheFormatVersion, 4);
  put_le(out, 12, meta.is_cubin ? 0 : kFlagPtx, 4);
  std::memcpy(out.data() + 16, raw_key.data(), raw_key.size());
  put_le(out, 48, payload.size(), 8);
  put_le(out, 56, meta.target.size(), 2);
  put_le(out, 58, meta.label.size(), 2);
  std::memcpy(out.data() + kEntryFixedHeader, meta.target.data(), meta.target.size());
  std::memcpy(out.data() + kEntryFixedHeader + meta.target.size(), meta.label.data(),
              meta.label.size());
  if (!payload.empty()) {
    std::memcpy(out.data() + head + kEntryChecksumBytes, payload.data(), payload.size());
  }
  const Sha256Digest sum = checksum(std::span<const char>(out.data(), head), payload);
  std::memcpy(out.data() + head, sum.data(), sum.size());
  return out;
}

std::optional<std::uint32_t> cache_entry_format_version(std::span<const char> file) {
  if (file.size() < 12 || std::string_view(file.data(), kMagic.size()) != kMagic) {
    return std::nullopt;
  }
  return static_cast<std::uint32_t>(get_le(file, 8, 4));
}

DecodedEntry decode_cache_entry(std::span<const char> file, const std::string& expected_key) {
  DecodedEntry d;
  if (file.empty()) {
    d.problem = "empty file";
    return d;
  }
  if (file.size() < kEntryFixedHeader) {
    d.problem = "truncated header (" + std::to_string(file.size()) + " bytes)";
    return d;
  }
  if (std::string_view(file.data(), kMagic.size()) != kMagic) {
    d.problem = "not a metrale cache entry (bad magic)";
    return d;
  }
  const std::uint64_t version = get_le(file, 8, 4);
  if (version != kCacheFormatVersion) {
    d.problem = "format version " + std::to_string(version) + ", expected " +
                std::to_string(kCacheFormatVersion);
    return d;
  }
  const std::uint64_t flags = get_le(file, 12, 4);
  d.key = to_hex(as_bytes(file.subspan(16, 32)));
  const std::uint64_t payload_size = get_le(file, 48, 8);
  const std::size_t target_size = get_le(file, 56, 2);
  const std::size_t label_size = get_le(file, 58, 2);
  const std::size_t head = kEntryFixedHeader + target_size + label_size;
  if (flags > kFlagPtx || get_le(file, 60, 4) != 0) {
    d.problem = "inconsistent header (unknown flags)";
    return d;
  }
  if (head + kEntryChecksumBytes > file.size()) {
    d.problem = "truncated header (" + std::to_string(file.size()) + " bytes)";
    return d;
  }
  // Compared against what is there, so a corrupt length cannot overflow a sum.
  const std::size_t body = file.size() - head - kEntryChecksumBytes;
  if (payload_size != body) {
    d.problem = (payload_size > body ? "truncated: " : "trailing bytes: ") +
                std::to_string(body) + " bytes of image where the header says " +
                std::to_string(payload_size);
    return d;
  }
  d.meta.target.assign(file.data() + kEntryFixedHeader, target_size);
  d.meta.label.assign(file.data() + kEntryFixedHeader + target_size, label_size);
  d.meta.is_cubin = (flags & kFlagPtx) == 0;
  d.payload_offset = head + kEntryChecksumBytes;
  d.payload_size = static_cast<std::size_t>(payload_size);
  const Sha256Digest sum = checksum(file.first(head), file.subspan(d.payload_offset));
  if (std::memcmp(sum.data(), file.data() + head, sum.size()) != 0) {
    d.problem = "checksum mismatch";
    return d;
  }
  if (!expected_key.empty() && d.key != expected_key) {
    d.problem = "holds key " + d.key + ", not the key its name says";
    return d;
  }
  return d;
}

bool is_temporary_cache_file(const std::string& file_name) {
  return file_name.starts_with(".tmp-");
}

}  // namespace metrale
