// The library's logger as an engine embeds it: its own sinks added and taken away.
#include <doctest/doctest.h>
#include <spdlog/sinks/ostream_sink.h>

#include <memory>
#include <sstream>
#include <string>

#include "metrale/log.hpp"

TEST_CASE("add_log_sink gives the logger the engine's sink; remove_log_sink takes it") {
  // A logger without sinks stands in for stderr, so the test prints nothing.
  metrale::set_logger(std::make_shared<spdlog::logger>("metrale"));
  std::ostringstream out;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
  metrale::add_log_sink(sink);
  metrale::logger()->error("embedding test message {}", 1);
  metrale::remove_log_sink(sink);
  metrale::logger()->error("embedding test message {}", 2);
  metrale::set_logger(nullptr);
  CHECK(out.str().find("embedding test message 1") != std::string::npos);
  CHECK(out.str().find("embedding test message 2") == std::string::npos);
}
