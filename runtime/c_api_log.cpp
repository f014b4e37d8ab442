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

// One sink for the process, its callback swapped under base_sink's mutex: the callback
// never runs concurrently with itself, and once metrale_set_log_callback returns no
// thread calls the callback it replaced (a logger another thread still holds hands its
// messages to the new one, or drops them after NULL).
class CallbackSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  void set_target(metrale_log_callback callback, void* user) {
    std::lock_guard lock(mutex_);
    callback_ = callback;
    user_ = user;
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    if (callback_ == nullptr) return;
    const std::string text(msg.payload.data(), msg.payload.size());
    callback_(static_cast<int>(msg.level), text.c_str(), user_);
  }
  void flush_() override {}

 private:
  metrale_log_callback callback_ = nullptr;
  void* user_ = nullptr;
};

const std::shared_ptr<CallbackSink>& callback_sink() {
  static const auto sink = std::make_shared<CallbackSink>();
  return sink;
}

// Serialises the two setters, so that a level set while the logger is swapped is kept.
std::mutex g_setters;

}  // namespace

extern "C" {

metrale_status metrale_set_log_callback(metrale_log_callback callback, void* user) noexcept {
  return metrale::capi::run([&](metrale_status& phase) {
    phase = METRALE_ERROR_INTERNAL;
    std::lock_guard lock(g_setters);
    const std::shared_ptr<spdlog::logger> current = metrale::logger();
    const bool routed = current->sinks().size() == 1 && current->sinks()[0] == callback_sink();
    callback_sink()->set_target(callback, user);
    // The level survives a swap of the logger.
    if (callback == nullptr) {
      if (routed) {
        metrale::set_logger(nullptr);
        metrale::logger()->set_level(current->level());
      }
    } else if (!routed) {
      metrale::set_logger(std::make_shared<spdlog::logger>("metrale", callback_sink()));
      metrale::logger()->set_level(current->level());
    }
  });
}

metrale_status metrale_set_log_level(int level) noexcept {
  return metrale::capi::run([&](metrale_status&) {
    metrale::ensure(level >= METRALE_LOG_TRACE && level <= METRALE_LOG_OFF,
                    "metrale_set_log_level: level={} outside {}..={} (trace..off)", level,
                    static_cast<int>(METRALE_LOG_TRACE), static_cast<int>(METRALE_LOG_OFF));
    std::lock_guard lock(g_setters);
    metrale::logger()->set_level(static_cast<spdlog::level::level_enum>(level));
  });
}

}  // extern "C"
