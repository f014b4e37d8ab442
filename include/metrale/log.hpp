// The library's spdlog logger. Its level comes from METRALE_LOG_LEVEL (trace, debug,
// info, warn, error, critical, off; default warn). Engines may replace the logger or
// give it their own sinks.
#pragma once

#include <memory>

#include <spdlog/common.h>
#include <spdlog/logger.h>

namespace metrale {

// The logger every part of the library writes to. Thread-safe.
std::shared_ptr<spdlog::logger> logger();

// Replaces the library's logger (for example with one that writes to the engine's
// sinks). Passing nullptr restores the default stderr logger. Thread-safe.
void set_logger(std::shared_ptr<spdlog::logger> replacement);

// Adds a sink to the library's logger, next to the ones it has (stderr by default). The
// logger is replaced by a copy with the extra sink (same level), so threads logging at
// that moment are never disturbed; set_logger afterwards drops the added sinks with the
// old logger. The sink formats messages itself and must be thread-safe (an *_mt sink).
void add_log_sink(spdlog::sink_ptr sink);

// Removes a sink added with add_log_sink (nothing happens if the logger lacks it).
void remove_log_sink(const spdlog::sink_ptr& sink);

}  // namespace metrale
