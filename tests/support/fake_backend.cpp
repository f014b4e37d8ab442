#include "support/fake_backend.hpp"

#include <atomic>
#include <cstring>
#include <thread>

#include "metrale/error.hpp"

namespace metrale::test {
namespace {

// The fake image is "FAKE N_TILE=<v>" (or "FAKE" without the define).
class FakeModule final : public LoadedModule {
 public:
  FakeModule(std::string image, std::int32_t skew)
      : image_(std::move(image)), skew_(skew), id_(next_id_.fetch_add(1)) {}
  void* function(std::string_view entry) const override {
    // Any non-null pointer will do: the recorder never calls it. Distinct per module.
    return reinterpret_cast<void*>(0x1000 + (id_ % 0x10000) * 0x100 +
                                   std::hash<std::string_view>{}(entry) % 0x100);
  }
  // As the kernel sources define them: the tile constants follow the N_TILE define, the
  // stream entry's ring stage is a fixed 16 KiB.
  std::uint32_t read_global_u32(std::string_view name) const override {
    if (name == "M16_STREAM_STAGE_WEIGHT_BYTES") return static_cast<std::uint32_t>(16384 + skew_);
    const auto pos = image_.find("N_TILE=");
    if (pos == std::string::npos) fail("fake module has no global {}", name);
    return static_cast<std::uint32_t>(std::stoi(image_.substr(pos + 7)) + skew_);
  }

 private:
  static inline std::atomic<std::uint64_t> next_id_{0};
  std::string image_;
  std::int32_t skew_;
  std::uint64_t id_;
};

}  // namespace

std::uint64_t RecordedLaunch::u64_arg(std::size_t i) const {
  std::uint64_t v = 0;
  if (args.at(i).size() != sizeof(v)) fail("argument {} is {} bytes, not 8", i, args[i].size());
  std::memcpy(&v, args[i].data(), sizeof(v));
  return v;
}

std::uint32_t RecordedLaunch::u32_arg(std::size_t i) const {
  std::uint32_t v = 0;
  if (args.at(i).size() != sizeof(v)) fail("argument {} is {} bytes, not 4", i, args[i].size());
  std::memcpy(&v, args[i].data(), sizeof(v));
  return v;
}

std::unique_ptr<LoadedModule> RecordingBackend::load_module(std::span<const char> image,
                                                            std::string_view) const {
  return std::make_unique<FakeModule>(std::string(image.begin(), image.end()),
                                      tile_constant_skew);
}

void RecordingBackend::launch(const KernelHandle& kernel, const LaunchConfig& config,
                              std::span<const KernelArg> args, StreamHandle stream) const {
  RecordedLaunch r;
  r.kernel = kernel.name != nullptr ? kernel.name : "";
  r.function = kernel.function;
  r.config = config;
  r.stream = stream;
  for (const KernelArg& a : args) {
    const auto* p = static_cast<const std::uint8_t*>(a.value);
    r.args.emplace_back(p, p + a.size);
  }
  std::lock_guard lock(mutex_);
  launches_.push_back(std::move(r));
}

std::vector<RecordedLaunch> RecordingBackend::launches() const {
  std::lock_guard lock(mutex_);
  return launches_;
}

ModuleCache::CompileFn CountingCompiler::fn() {
  return [this](const CompileRequest& request) {
    calls.fetch_add(1);
    if (delay.count() > 0) std::this_thread::sleep_for(delay);
    if (fail) metrale::fail("fake compile of {} failed on purpose", request.source_name);
    std::string image = "FAKE";
    for (const Define& d : request.defines) {
      if (d.name == "N_TILE") image += " N_TILE=" + d.value;
    }
    CompiledModule out;
    out.image.assign(image.begin(), image.end());
    return out;
  };
}

}  // namespace metrale::test
