#pragma once

#include <algorithm>
#include <string_view>

namespace metrale {

// Calls `each` with every line of `text` without its '\n'; a last line without one counts.
template <class Each>
void for_each_line(std::string_view text, Each&& each) {
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    each(text.substr(start, end - start));
    start = end + 1;
  }
}

}  // namespace metrale
