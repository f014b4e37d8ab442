// The key of a persistent cache entry: a SHA-256 over everything that changes the
// compiled binary and nothing that doesn't. It covers the source and every embedded
// header (all are offered to NVRTC as includes), the defines (sorted by name), the
// options nvrtc_compile derives, the exact target, the NVRTC version and the loaded NVRTC
// build's ID (nvrtc_library_identity: the version has no patch level), the library
// version and the cache format version. Source and header names enter only as base
// names, so two checkouts or install prefixes of the library share entries.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "metrale/nvrtc_compiler.hpp"

namespace metrale {

// Bumped whenever the entry file layout or the key's composition changes.
inline constexpr std::uint32_t kCacheFormatVersion = 2;

// The library version CMake passes in (PROJECT_VERSION).
std::string_view library_version();

struct NamedText {
  std::string name;
  std::string_view text;
};

// Everything a key is made of, spelled out so tests can vary one input at a time.
struct CacheKeyInputs {
  std::string source_name;
  std::string_view source;
  std::vector<NamedText> headers;
  std::vector<Define> defines;
  std::vector<std::string> options;  // extra options, as in CompileRequest
  std::string target;                // exact: "sm_90" and "compute_90" differ
  std::string nvrtc_version;
  std::string nvrtc_library;  // nvrtc_library_identity()
  std::string library_version;
  std::uint32_t format_version = kCacheFormatVersion;
};

// The inputs for `request` with the embedded headers, the linked NVRTC's version and
// library identity, and this library's version.
CacheKeyInputs cache_key_inputs(const CompileRequest& request);

// The exact bytes that are hashed (length-prefixed fields), for tests and debugging.
std::string cache_key_material(const CacheKeyInputs& inputs);

// 64 lower-case hex digits.
std::string cache_key(const CacheKeyInputs& inputs);
std::string cache_key(const CompileRequest& request);

}  // namespace metrale
