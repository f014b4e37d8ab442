// SHA-256 (FIPS 180-4), used for cache keys and for the checksum of cache entries. A
// cryptographic hash is more than corruption detection needs; it is used because one
// well-known function serves both, and a cache key must not collide by accident.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace metrale {

using Sha256Digest = std::array<std::uint8_t, 32>;

class Sha256 {
 public:
  Sha256();
  Sha256& update(std::span<const std::uint8_t> bytes);
  Sha256& update(std::string_view text);
  // Returns the digest; the object must not be updated afterwards.
  Sha256Digest finish();

 private:
  void compress(const std::uint8_t* block);

  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t total_bytes_ = 0;
};

Sha256Digest sha256(std::span<const std::uint8_t> bytes);
Sha256Digest sha256(std::string_view text);

// Lower-case hexadecimal, two characters per byte.
std::string to_hex(std::span<const std::uint8_t> bytes);

}  // namespace metrale
