#include "metrale/cache_key.hpp"

#include <algorithm>

#include "metrale/embedded_sources.hpp"
#include "sha256.hpp"

#ifndef METRALE_VERSION_STRING
#error "METRALE_VERSION_STRING must be defined by the build (PROJECT_VERSION)"
#endif

namespace metrale {
namespace {

// Only the last path component: a checkout's or install prefix's location must not
// split the cache.
std::string base_name(std::string_view name) {
  const auto slash = name.find_last_of('/');
  return std::string(slash == std::string_view::npos ? name : name.substr(slash + 1));
}

// Length-prefixed, so that no two different field sequences produce the same bytes.
void field(std::string& out, std::string_view tag, std::string_view value) {
  out += tag;
  out += ' ';
  out += std::to_string(value.size());
  out += ':';
  out += value;
  out += '\n';
}

}  // namespace

std::string_view library_version() { return METRALE_VERSION_STRING; }

CacheKeyInputs cache_key_inputs(const CompileRequest& request) {
  CacheKeyInputs in;
  in.source_name = request.source_name;
  in.source = request.source;
  for (const EmbeddedSource& s : embedded_sources()) {
    if (s.name.ends_with(".cuh")) in.headers.push_back({std::string(s.name), s.text});
  }
  in.defines = request.defines;
  in.options = request.options;
  in.target = request.target;
  in.nvrtc_version = nvrtc_version();
  in.nvrtc_library = nvrtc_library_identity();
  in.library_version = std::string(library_version());
  return in;
}

std::string cache_key_material(const CacheKeyInputs& inputs) {
  std::string out;
  out.reserve(inputs.source.size() + 4096);
  field(out, "format", std::to_string(inputs.format_version));
  field(out, "library", inputs.library_version);
  field(out, "nvrtc", inputs.nvrtc_version);
  field(out, "nvrtc-library", inputs.nvrtc_library);
  field(out, "target", inputs.target);
  field(out, "source-name", base_name(inputs.source_name));
  field(out, "source", inputs.source);
  std::vector<NamedText> headers = inputs.headers;
  std::sort(headers.begin(), headers.end(),
            [](const NamedText& a, const NamedText& b) { return a.name < b.name; });
  for (const NamedText& h : headers) {
    field(out, "header-name", base_name(h.name));
    field(out, "header", h.text);
  }
  // Sorted by name only: a stable sort keeps the relative order of a repeated name,
  // which decides its final value.
  std::vector<Define> defines = inputs.defines;
  std::stable_sort(defines.begin(), defines.end(),
                   [](const Define& a, const Define& b) { return a.name < b.name; });
  for (const Define& d : defines) {
    field(out, "define", d.name);
    field(out, "value", d.value);
  }
  // The options nvrtc_compile derives (architecture, language, math, then the extras),
  // after the sorted defines so their order cannot split the key.
  CompileRequest normalized{base_name(inputs.source_name), inputs.source, defines,
                            inputs.options, inputs.target};
  for (const std::string& o : nvrtc_options(normalized)) field(out, "option", o);
  return out;
}

std::string cache_key(const CacheKeyInputs& inputs) {
  return to_hex(sha256(cache_key_material(inputs)));
}

std::string cache_key(const CompileRequest& request) {
  return cache_key(cache_key_inputs(request));
}

}  // namespace metrale
