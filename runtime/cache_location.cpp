// Where the persistent kernel cache lives, as the environment says.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>
#include <string_view>

#include "metrale/disk_cache.hpp"

namespace metrale {
namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

bool switched_off(std::string value) {
  std::transform(value.begin(), value.end(), value.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return value == "0" || value == "off" || value == "false" || value == "no";
}

}  // namespace

std::filesystem::path default_cache_directory() {
  if (std::string dir = env("METRALE_KERNEL_CACHE_DIR"); !dir.empty()) return dir;
  // XDG: a relative XDG_CACHE_HOME is invalid and must be ignored.
  if (std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty() && xdg.front() == '/') {
    return std::filesystem::path(xdg) / "metrale" / "kernels";
  }
  if (std::string home = env("HOME"); !home.empty()) {
    return std::filesystem::path(home) / ".cache" / "metrale" / "kernels";
  }
  return {};
}

DiskCacheConfig DiskCacheConfig::from_environment() {
  if (switched_off(env("METRALE_KERNEL_CACHE"))) return disabled();
  std::vector<std::filesystem::path> layers;
  const std::string path_list = env("METRALE_KERNEL_CACHE_PATH");
  std::string_view rest = path_list;
  while (!rest.empty()) {
    const auto colon = rest.find(':');
    const std::string_view item = rest.substr(0, colon);
    if (!item.empty()) layers.emplace_back(item);
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  DiskCacheConfig config = at(default_cache_directory(), std::move(layers));
  config.enabled = !config.directory.empty() || !config.read_only_dirs.empty();
  return config;
}

DiskCacheConfig DiskCacheConfig::at(std::filesystem::path directory,
                                    std::vector<std::filesystem::path> read_only_dirs) {
  DiskCacheConfig config;
  config.enabled = true;
  config.directory = std::move(directory);
  config.read_only_dirs = std::move(read_only_dirs);
  return config;
}

}  // namespace metrale
