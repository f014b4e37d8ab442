#include "metrale/log.hpp"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

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

// A copy of `from` with other sinks: same name, level and flush level. Loggers are
// swapped, never changed in place, because spdlog does not lock a logger's sink list.
std::shared_ptr<spdlog::logger> with_sinks(const spdlog::logger& from,
                                           std::vector<spdlog::sink_ptr> sinks) {
  auto made = std::make_shared<spdlog::logger>(from.name(), sinks.begin(), sinks.end());
  made->set_level(from.level());
  made->flush_on(from.flush_level());
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

void add_log_sink(spdlog::sink_ptr sink) {
  if (!sink) return;
  std::lock_guard lock(g_mutex);
  if (!g_logger) g_logger = make_default();
  std::vector<spdlog::sink_ptr> sinks = g_logger->sinks();
  sinks.push_back(std::move(sink));
  g_logger = with_sinks(*g_logger, std::move(sinks));
}

void remove_log_sink(const spdlog::sink_ptr& sink) {
  std::lock_guard lock(g_mutex);
  if (!g_logger) return;
  std::vector<spdlog::sink_ptr> sinks = g_logger->sinks();
  const auto kept = std::remove(sinks.begin(), sinks.end(), sink);
  if (kept == sinks.end()) return;
  sinks.erase(kept, sinks.end());
  g_logger = with_sinks(*g_logger, std::move(sinks));
}

}  // namespace metrale
