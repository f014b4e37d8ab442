// The library's spdlog logger. Its level comes from METRALE_LOG_LEVEL (trace, debug,
// info, warn, error, critical, off; default warn). Engines may replace the logger or
// give it their own sinks.
#pragma once

#include <memory>

#include <spdlog/logger.h>

namespace metrale {

// The logger every part of the library writes to. Thread-safe.
std::shared_ptr<spdlog::logger> logger();

// Replaces the library's logger (for example with one that writes to the engine's
// sinks). Passing nullptr restores the default stderr logger. Thread-safe.
void set_logger(std::shared_ptr<spdlog::logger> replacement);

}  // namespace metrale
