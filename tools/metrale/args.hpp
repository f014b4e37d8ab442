// A small command-line parser for the CLI's commands: --flag, --key value, --key=value.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "metrale/error.hpp"
#include "metrale/nvrtc_compiler.hpp"

namespace metrale::cli {

// A mistake in the command line itself: an unknown command or option, a missing or bad
// value, a stray argument, options that do not go together. main() prints it with a
// pointer to the command's --help and exits 2, apart from a failure of the work itself
// (exit 1), so that a script can tell a mistyped call from a run that went wrong.
class UsageError : public Error {
 public:
  using Error::Error;
};

template <typename... T>
[[noreturn]] void usage_fail(fmt::format_string<T...> format, T&&... args) {
  throw UsageError(fmt::format(format, std::forward<T>(args)...));
}

// ensure() for the command line: throws UsageError when the condition is false.
template <typename... T>
void usage_ensure(bool condition, fmt::format_string<T...> format, T&&... args) {
  if (!condition) usage_fail(format, std::forward<T>(args)...);
}

// The result of `parse`, a parse of an option's text by code that reports a bad one as
// metrale::Error (the library's target and variant names, the benchmark's shapes and
// entries), with that error rethrown as a UsageError.
template <typename F>
auto as_usage(F&& parse) -> decltype(parse()) {
  try {
    return parse();
  } catch (const UsageError&) {
    throw;
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
}

class Args {
 public:
  // Parses argv[first..]; `flags` take no value, `options` take one. -h is --help (where
  // "help" is a flag), as users expect of any tool; any other single-dash argument is an
  // unknown option rather than a positional one. Unknown names and missing values throw
  // UsageError. Options may repeat (all values are kept).
  Args(int argc, char** argv, int first, const std::vector<std::string>& flags,
       const std::vector<std::string>& options);

  bool has(const std::string& name) const;
  std::optional<std::string> value(const std::string& name) const;
  std::vector<std::string> values(const std::string& name) const;
  std::string value_or(const std::string& name, const std::string& fallback) const;
  const std::vector<std::string>& positional() const { return positional_; }

  // Throws UsageError naming the first positional argument, for a command that takes
  // none: a stray word is a mistyped option or a misplaced value, never to be ignored.
  void refuse_positional(const std::string& command) const;

 private:
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positional_;
};

// "1,8,16" -> {1, 8, 16}; throws UsageError on anything else.
std::vector<std::uint32_t> parse_u32_list(const std::string& text, const std::string& what);

// The one unsigned integer of option --`name`, or `fallback` where it is absent; throws
// UsageError on a list or anything else.
std::uint32_t parse_one_u32(const Args& args, const std::string& name, std::uint32_t fallback);

// The CUDA device ordinal of --device (default 0), 0..INT_MAX; throws UsageError on
// anything else. The driver takes an int: an unsigned parse cast to one turns 4294967295
// into -1.
int parse_device(const Args& args);

// The token counts of --m (default 1,8,16), each 1..16 (the entries' M tile); throws
// UsageError on anything else.
std::vector<std::uint32_t> parse_token_counts(const Args& args);

// Every --define NAME=VALUE of `args`, in order; throws UsageError on a value without
// a name and an '='.
std::vector<Define> parse_defines(const Args& args);

}  // namespace metrale::cli
