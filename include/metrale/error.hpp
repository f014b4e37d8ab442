// The library's one error type. Every failure a caller can cause or observe (a bad
// argument, a missing driver, a compile error, a driver call that failed) is thrown as
// metrale::Error with a message formatted by fmt; nothing calls exit() or assert().
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace metrale {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

// The seed's `ensure!`: throws with the formatted message when the condition is false.
template <typename... Args>
void ensure(bool condition, fmt::format_string<Args...> format, Args&&... args) {
  if (!condition) {
    throw Error(fmt::format(format, std::forward<Args>(args)...));
  }
}

}  // namespace metrale
