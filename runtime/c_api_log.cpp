// The C ABI's logging: a sink that hands each message to a C callback, and the level.
#include <spdlog/sinks/base_sink.h>

#include <memory>
#include <mutex>
#include <string>

#include "c_api_internal.hpp"
#include "metrale/kernels.h"
#include "metrale/log.hpp"

namespace {

// metrale_log_level numbers the levels as spdlog does, so they pass through unchanged.
static_assert(METRALE_LOG_TRACE == static_cast<int>(spdlog::level::trace));
static_assert(METRALE_LOG_WARN == static_cast<int>(spdlog::level::warn));
static_assert(METRALE_LOG_OFF == static_cast<int>(spdlog::level::off));

// base_sink's mutex serialises the callback, so a C callback never runs concurrently
// with itself.
class CallbackSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  CallbackSink(metrale_log_callback callback, void* user) : callback_(callback), user_(user) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    const std::string text(msg.payload.data(), msg.payload.size());
    callback_(static_cast<int>(msg.level), text.c_str(), user_);
  }
  void flush_() override {}

 private:
  metrale_log_callback callback_;
  void* user_;
};

}  // namespace

extern "C" {

metrale_status metrale_set_log_callback(metrale_log_callback callback, void* user) noexcept {
  return metrale::capi::run([&](metrale_status& phase) {
    phase = METRALE_ERROR_INTERNAL;
    // The level survives the swap, whichever way it goes.
    const auto level = metrale::logger()->level();
    if (callback == nullptr) {
      metrale::set_logger(nullptr);
    } else {
      metrale::set_logger(std::make_shared<spdlog::logger>(
          "metrale", std::make_shared<CallbackSink>(callback, user)));
    }
    metrale::logger()->set_level(level);
  });
}

metrale_status metrale_set_log_level(int level) noexcept {
  return metrale::capi::run([&](metrale_status&) {
    metrale::ensure(level >= METRALE_LOG_TRACE && level <= METRALE_LOG_OFF,
                    "metrale_set_log_level: level={} outside {}..={} (trace..off)", level,
                    static_cast<int>(METRALE_LOG_TRACE), static_cast<int>(METRALE_LOG_OFF));
    metrale::logger()->set_level(static_cast<spdlog::level::level_enum>(level));
  });
}

}  // extern "C"
