#include "metrale/log.hpp"

#include <cstdlib>
#include <mutex>
#include <string>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace metrale {
namespace {

std::mutex g_mutex;
std::shared_ptr<spdlog::logger> g_logger;  // guarded by g_mutex

spdlog::level::level_enum level_from_env() {
  const char* value = std::getenv("METRALE_LOG_LEVEL");
  if (value == nullptr || *value == '\0') return spdlog::level::warn;
  auto level = spdlog::level::from_str(value);
  // from_str maps unknown names to off; an unknown name keeps the default instead.
  if (level == spdlog::level::off && std::string(value) != "off") return spdlog::level::warn;
  return level;
}

std::shared_ptr<spdlog::logger> make_default() {
  auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  auto made = std::make_shared<spdlog::logger>("metrale", std::move(sink));
  made->set_level(level_from_env());
  made->set_pattern("[%H:%M:%S.%e] [metrale] [%l] %v");
  return made;
}

}  // namespace

std::shared_ptr<spdlog::logger> logger() {
  std::lock_guard lock(g_mutex);
  if (!g_logger) g_logger = make_default();
  return g_logger;
}

void set_logger(std::shared_ptr<spdlog::logger> replacement) {
  std::lock_guard lock(g_mutex);
  if (replacement) {
    if (std::getenv("METRALE_LOG_LEVEL") != nullptr) replacement->set_level(level_from_env());
    g_logger = std::move(replacement);
  } else {
    g_logger = make_default();
  }
}

}  // namespace metrale
