#include "metrale/embedded_sources.hpp"

#include <string>

#include "metrale/error.hpp"

namespace metrale {

std::string_view embedded_source(std::string_view name) {
  std::string known;
  for (const EmbeddedSource& s : embedded_sources()) {
    if (s.name == name) return s.text;
    known += (known.empty() ? "" : ", ") + std::string(s.name);
  }
  fail("no embedded kernel source named {} (embedded: {})", name, known);
}

}  // namespace metrale
