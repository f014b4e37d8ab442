// A small command-line parser for the CLI's commands: --flag, --key value, --key=value.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "metrale/nvrtc_compiler.hpp"

namespace metrale::cli {

class Args {
 public:
  // Parses argv[first..]; `flags` take no value, `options` take one. Unknown names and
  // missing values throw metrale::Error. Options may repeat (all values are kept).
  Args(int argc, char** argv, int first, const std::vector<std::string>& flags,
       const std::vector<std::string>& options);

  bool has(const std::string& name) const;
  std::optional<std::string> value(const std::string& name) const;
  std::vector<std::string> values(const std::string& name) const;
  std::string value_or(const std::string& name, const std::string& fallback) const;
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positional_;
};

// "1,8,16" -> {1, 8, 16}; throws metrale::Error on anything else.
std::vector<std::uint32_t> parse_u32_list(const std::string& text, const std::string& what);

// The one unsigned integer of option --`name`, or `fallback` where it is absent; throws
// metrale::Error on a list or anything else.
std::uint32_t parse_one_u32(const Args& args, const std::string& name, std::uint32_t fallback);

// The token counts of --m (default 1,8,16), each 1..16 (the entries' M tile); throws
// metrale::Error on anything else.
std::vector<std::uint32_t> parse_token_counts(const Args& args);

// Every --define NAME=VALUE of `args`, in order; throws metrale::Error on a value without
// a name and an '='.
std::vector<Define> parse_defines(const Args& args);

}  // namespace metrale::cli
