#include "metrale/args.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <optional>
#include <string_view>

#include "metrale/error.hpp"

namespace metrale::cli {

Args::Args(int argc, char** argv, int first, const std::vector<std::string>& flags,
           const std::vector<std::string>& options) {
  auto contains = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  for (int i = first; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h") arg = "--help";
    if (!arg.starts_with("-") || arg == "-") {
      positional_.push_back(arg);
      continue;
    }
    usage_ensure(arg.starts_with("--"), "unknown option {}", arg);
    std::string name = arg.substr(2);
    std::optional<std::string> inline_value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (contains(flags, name)) {
      usage_ensure(!inline_value, "--{} takes no value", name);
      values_[name].push_back("1");
    } else if (contains(options, name)) {
      if (inline_value) {
        values_[name].push_back(*inline_value);
      } else {
        usage_ensure(i + 1 < argc, "--{} needs a value", name);
        values_[name].push_back(argv[++i]);
      }
    } else {
      usage_fail("unknown option --{}", name);
    }
  }
}

void Args::refuse_positional(const std::string& command) const {
  usage_ensure(positional_.empty(), "{}: unexpected argument '{}'", command,
               positional_.empty() ? std::string() : positional_.front());
}

bool Args::has(const std::string& name) const { return values_.contains(name); }

std::optional<std::string> Args::value(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  // An option read as one value and given twice is refused, not resolved by its last.
  usage_ensure(it->second.size() == 1, "--{} given {} times; it takes one value", name,
               it->second.size());
  return it->second.front();
}

std::vector<std::string> Args::values(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

std::string Args::value_or(const std::string& name, const std::string& fallback) const {
  return value(name).value_or(fallback);
}

namespace {

// The number `text` spells, whole: nothing before or after it, nothing empty, no overflow.
template <typename T>
std::optional<T> parse_whole(std::string_view text) {
  T out{};
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, out);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return out;
}

}  // namespace

std::vector<std::uint32_t> parse_u32_list(const std::string& text, const std::string& what) {
  std::vector<std::uint32_t> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::optional<std::uint32_t> v =
        parse_whole<std::uint32_t>(std::string_view(text).substr(start, end - start));
    usage_ensure(v.has_value(), "{}: '{}' is not a comma-separated list of unsigned integers",
                 what, text);
    out.push_back(*v);
    start = end + 1;
  }
  return out;
}

std::uint32_t parse_one_u32(const Args& args, const std::string& name, std::uint32_t fallback) {
  const auto v = args.value(name);
  if (!v) return fallback;
  const std::optional<std::uint32_t> out = parse_whole<std::uint32_t>(*v);
  usage_ensure(out.has_value(), "--{}: expected one unsigned integer of at most {}, got '{}'",
               name, std::numeric_limits<std::uint32_t>::max(), *v);
  return *out;
}

int parse_device(const Args& args) {
  const auto v = args.value("device");
  if (!v) return 0;
  const std::optional<int> device = parse_whole<int>(*v);
  usage_ensure(device.has_value() && *device >= 0,
               "--device: '{}' is not a CUDA device ordinal (0..{})", *v,
               std::numeric_limits<int>::max());
  return *device;
}

std::vector<std::uint32_t> parse_token_counts(const Args& args) {
  const std::vector<std::uint32_t> ms = parse_u32_list(args.value_or("m", "1,8,16"), "--m");
  for (const std::uint32_t m : ms) {
    usage_ensure(m >= 1 && m <= 16, "--m: {} is outside 1..16 (the entries' M tile)", m);
  }
  return ms;
}

std::vector<Define> parse_defines(const Args& args) {
  std::vector<Define> out;
  for (const std::string& d : args.values("define")) {
    const std::size_t eq = d.find('=');
    usage_ensure(eq != std::string::npos && eq > 0, "--define: '{}' is not NAME=VALUE", d);
    out.push_back({d.substr(0, eq), d.substr(eq + 1)});
  }
  return out;
}

}  // namespace metrale::cli
