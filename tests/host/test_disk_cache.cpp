// The persistent kernel cache: the entry format, healing of damaged entries through the
// module cache, read-only layers, an unwritable location, stores that fail or find the
// directory gone, a discard racing a store, the environment, the PTX fallback target,
// trimming, and 16 processes filling one directory at once.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include <spdlog/sinks/ostream_sink.h>

#include "cache_entry.hpp"
#include "file_io.hpp"
#include "metrale/cache_key.hpp"
#include "metrale/cache_maintenance.hpp"
#include "metrale/compile_target.hpp"
#include "metrale/disk_cache.hpp"
#include "metrale/error.hpp"
#include "metrale/log.hpp"
#include "metrale/module_cache.hpp"
#include "support/fake_backend.hpp"

using namespace metrale;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    std::string pattern = "/tmp/metrale-cache-test-XXXXXX";
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

// Sets (or, with nullopt, unsets) a variable for a scope.
struct EnvVar {
  std::string name;
  std::optional<std::string> saved;
  EnvVar(std::string n, std::optional<std::string> value) : name(std::move(n)) {
    if (const char* old = std::getenv(name.c_str())) saved = old;
    if (value) ::setenv(name.c_str(), value->c_str(), 1);
    else ::unsetenv(name.c_str());
  }
  ~EnvVar() {
    if (saved) ::setenv(name.c_str(), saved->c_str(), 1);
    else ::unsetenv(name.c_str());
  }
};

// Routes the library's log into a string for a scope.
struct LogCapture {
  std::ostringstream text;
  std::shared_ptr<spdlog::logger> saved = logger();
  LogCapture() {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(text);
    auto l = std::make_shared<spdlog::logger>("capture", sink);
    l->set_pattern("%l %v");
    l->set_level(spdlog::level::warn);
    set_logger(l);
  }
  ~LogCapture() { set_logger(saved); }
  int count(const std::string& needle) const {
    const std::string s = text.str();
    int n = 0;
    for (auto pos = s.find(needle); pos != std::string::npos; pos = s.find(needle, pos + 1)) ++n;
    return n;
  }
};

// A backend that records every image it loads and refuses those starting with "BAD".
class LoadingBackend final : public GpuBackend {
 public:
  std::string target_name = "sm_90";
  ContextId context() const override { return 0x77; }
  std::string target() const override { return target_name; }
  std::unique_ptr<LoadedModule> load_module(std::span<const char> image,
                                            std::string_view label) const override {
    std::string text(image.begin(), image.end());
    {
      std::lock_guard lock(mutex_);
      loaded_.push_back(text);
    }
    if (text.starts_with("BAD")) fail("loading module {} failed: bad image", label);
    return inner_.load_module(image, label);
  }
  TensorMapBytes tensor_map_2d(const TensorMap2dRequest& request) const override {
    return packed_tensor_map_request(request);
  }
  void launch(const KernelHandle&, const LaunchConfig&, std::span<const KernelArg>,
              StreamHandle) const override {}
  std::vector<std::string> loaded() const {
    std::lock_guard lock(mutex_);
    return loaded_;
  }

 private:
  test::RecordingBackend inner_;
  mutable std::mutex mutex_;
  mutable std::vector<std::string> loaded_;
};

// w8a16_gemm_m16's module for m <= 8; a handle of the entry loads it and the m > 8 one.
const KernelVariant& gemm() {
  static const std::vector<KernelVariant> builds = module_builds(variant_named("w8a16_gemm_m16"));
  return builds[0];
}

std::string key_of(const KernelVariant& v, const std::string& target = "sm_90") {
  return cache_key(compile_request(v, target));
}

fs::path entry_path(const fs::path& dir, const std::string& key) {
  return dir / cache_entry_file_name(key);
}

std::vector<char> read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_all(const fs::path& p, const std::vector<char>& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::vector<char> bytes_of(std::string_view s) { return {s.begin(), s.end()}; }

// An entry of the seed's module stored under `key` in a cache at `dir`, as a process
// before this one left it.
void store_gemm_entry(const fs::path& dir, const std::string& key, std::string_view image) {
  DiskCache disk(DiskCacheConfig::at(dir));
  REQUIRE(disk.store(key, {"sm_90", "w8a16_gemm_m16", true}, bytes_of(image)));
}

int temporary_files(const fs::path& dir) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    n += is_temporary_cache_file(e.path().filename().string()) ? 1 : 0;
  }
  return n;
}

}  // namespace

TEST_CASE("an entry stored is the entry loaded, with no temporary file left") {
  TempDir tmp;
  DiskCache cache(DiskCacheConfig::at(tmp.path));
  const std::string key = key_of(gemm());
  const std::vector<char> image = bytes_of("FAKE N_TILE=32 payload");
  REQUIRE(cache.store(key, {"sm_90", "w8a16_gemm_m16", true}, image));
  const auto hit = cache.load(key);
  REQUIRE(hit);
  CHECK(hit->image == image);
  CHECK(hit->meta.target == "sm_90");
  CHECK(hit->meta.label == "w8a16_gemm_m16");
  CHECK(hit->path == entry_path(tmp.path, key));
  CHECK(temporary_files(tmp.path) == 0);
  CHECK_FALSE(cache.load(key_of(variant_named("fill_random"))));
}

TEST_CASE("a truncated, a bit-flipped and a zero-length entry are each deleted and rebuilt") {
  for (const std::string damage : {"truncated", "bit-flipped", "zero-length"}) {
    CAPTURE(damage);
    TempDir tmp;
    LoadingBackend gpu;
    test::CountingCompiler compiler;
    {
      ModuleCache first(gpu, compiler.fn(), DiskCacheConfig::at(tmp.path));
      first.kernel("w8a16_gemm_m16");
      CHECK(first.stats().disk_stores == 2);
    }
    const fs::path path = entry_path(tmp.path, key_of(gemm()));
    std::vector<char> bytes = read_all(path);
    if (damage == "truncated") bytes.resize(bytes.size() / 2);
    if (damage == "bit-flipped") bytes[bytes.size() - 2] ^= 0x01;
    if (damage == "zero-length") bytes.clear();
    write_all(path, bytes);

    LogCapture log;
    ModuleCache second(gpu, compiler.fn(), DiskCacheConfig::at(tmp.path));
    CHECK(second.kernel("w8a16_gemm_m16").function != nullptr);
    CHECK(second.stats().compiles == 1);
    CHECK(second.stats().disk_hits == 1);  // the undamaged module for m > 8
    CHECK(second.stats().disk_rejected == 1);
    CHECK(log.count("is bad") == 1);
    CHECK(decode_cache_entry(read_all(path), key_of(gemm())).ok());

    ModuleCache third(gpu, compiler.fn(), DiskCacheConfig::at(tmp.path));
    third.kernel("w8a16_gemm_m16");
    CHECK(third.stats().compiles == 0);
    CHECK(third.stats().disk_hits == 2);
    CHECK(compiler.calls.load() == 3);
    CHECK(temporary_files(tmp.path) == 0);
  }
}

TEST_CASE("a cached image that fails to load is replaced once; a fresh failure is the caller's") {
  TempDir tmp;
  LoadingBackend gpu;
  test::CountingCompiler compiler;
  const std::string key = key_of(gemm());
  store_gemm_entry(tmp.path, key, "BAD image");
  LogCapture log;
  ModuleCache cache(gpu, compiler.fn(), DiskCacheConfig::at(tmp.path));
  CHECK(cache.kernel("w8a16_gemm_m16").function != nullptr);
  CHECK(cache.stats().compiles == 2);  // the rejected module and the uncached one for m > 8
  CHECK(cache.stats().disk_rejected == 1);
  CHECK(log.count("failed to load") == 1);
  const auto healed = DiskCache(DiskCacheConfig::at(tmp.path)).load(key);
  REQUIRE(healed);
  CHECK(std::string(healed->image.begin(), healed->image.end()) == "FAKE N_TILE=32");

  // When the fresh image fails too, the error is not the entry's: it stays.
  test::RecordingBackend skewed;
  skewed.tile_constant_skew = 1;
  ModuleCache refusing(skewed, compiler.fn(), DiskCacheConfig::at(tmp.path));
  CHECK_THROWS_WITH_AS(refusing.kernel("w8a16_gemm_m16"),
                       doctest::Contains("M16_N_TILE = 33 but the host expects 32"), Error);
  CHECK(fs::exists(entry_path(tmp.path, key)));
}

TEST_CASE("read-only layers are consulted first and never written") {
  TempDir ro;
  TempDir rw;
  const std::string key = key_of(gemm());
  store_gemm_entry(ro.path, key, "FAKE N_TILE=32 ro");
  store_gemm_entry(rw.path, key, "FAKE N_TILE=32 rw");
  LoadingBackend gpu;
  test::CountingCompiler compiler;
  ModuleCache cache(gpu, compiler.fn(), DiskCacheConfig::at(rw.path, {ro.path}));
  cache.kernel("w8a16_gemm_m16");  // its module for m > 8 is in neither layer
  REQUIRE(gpu.loaded().size() == 2);
  CHECK(gpu.loaded()[0] == "FAKE N_TILE=32 ro");
  cache.kernel("w8a16_gemm_m16_n64");  // in neither: compiled and written to rw only
  CHECK(compiler.calls.load() == 3);
  CHECK(std::distance(fs::directory_iterator(ro.path), fs::directory_iterator()) == 1);
  for (const KernelVariant& b : module_builds(variant_named("w8a16_gemm_m16_n64"))) {
    CHECK(fs::exists(entry_path(rw.path, key_of(b))));
  }

  // A bad entry in a read-only layer is skipped, not deleted; the next layer serves.
  const fs::path ro_entry = entry_path(ro.path, key);
  write_all(ro_entry, {});
  LogCapture log;
  ModuleCache again(gpu, compiler.fn(), DiskCacheConfig::at(rw.path, {ro.path}));
  const std::size_t loads_before = gpu.loaded().size();
  again.kernel("w8a16_gemm_m16");
  CHECK(gpu.loaded().at(loads_before) == "FAKE N_TILE=32 rw");
  CHECK(fs::exists(ro_entry));
  CHECK(log.count("read-only layer") == 1);
}

TEST_CASE("a read-only entry that does not load gives way to the writable directory's") {
  TempDir ro;
  TempDir rw;
  const std::string key = key_of(gemm());
  store_gemm_entry(ro.path, key, "BAD image");
  LoadingBackend gpu;
  test::CountingCompiler compiler;
  // The first process compiles and stores; the next ones load that copy, not compile.
  for (int process = 0; process < 3; ++process) {
    ModuleCache cache(gpu, compiler.fn(), DiskCacheConfig::at(rw.path, {ro.path}));
    cache.kernel("w8a16_gemm_m16");
  }
  const std::size_t builds = module_builds(variant_named("w8a16_gemm_m16")).size();
  CHECK(compiler.calls.load() == static_cast<int>(builds));
  CHECK(fs::exists(entry_path(ro.path, key)));
  CHECK(fs::exists(entry_path(rw.path, key)));
}

TEST_CASE("an unwritable location warns once per process and keeps modules in memory") {
  TempDir tmp;
  write_all(tmp.path / "a-file", bytes_of("x"));
  const fs::path impossible = tmp.path / "a-file" / "kernels";  // ENOTDIR, even for root
  LogCapture log;
  LoadingBackend gpu;
  test::CountingCompiler compiler;
  for (int round = 0; round < 2; ++round) {
    ModuleCache cache(gpu, compiler.fn(), DiskCacheConfig::at(impossible));
    cache.warm_up();
    CHECK(cache.stats().compiles == all_module_builds().size());
    CHECK(cache.stats().disk_stores == 0);
    CHECK_FALSE(cache.disk_cache().writable());
  }
  CHECK(log.count("not writable") == 1);
}

TEST_CASE("a cache directory removed while the process runs is made again by the next store") {
  TempDir tmp;
  const fs::path dir = tmp.path / "kernels";
  DiskCache cache(DiskCacheConfig::at(dir));
  const std::string key = key_of(gemm());
  REQUIRE(cache.store(key, {"sm_90", "w8a16_gemm_m16", true}, bytes_of("FAKE first")));
  fs::remove_all(dir);  // a clean-up of the cache while the process runs
  LogCapture log;
  CHECK(cache.store(key, {"sm_90", "w8a16_gemm_m16", true}, bytes_of("FAKE second")));
  CHECK(cache.writable());
  const auto hit = cache.load(key);
  REQUIRE(hit);
  CHECK(std::string(hit->image.begin(), hit->image.end()) == "FAKE second");
  CHECK(log.text.str().empty());
}

TEST_CASE("a store that fails for a cause that may pass fails alone, with one warning") {
  TempDir tmp;
  DiskCache cache(DiskCacheConfig::at(tmp.path));
  const std::string blocked = key_of(gemm());
  // rename(2) of the finished file over a directory fails with EISDIR, even for root.
  REQUIRE(fs::create_directory(entry_path(tmp.path, blocked)));
  LogCapture log;
  for (int attempt = 0; attempt < 3; ++attempt) {
    CHECK_FALSE(cache.store(blocked, {"sm_90", "w8a16_gemm_m16", true}, bytes_of("FAKE")));
  }
  CHECK(cache.writable());
  CHECK(log.count("cannot store a kernel cache entry") == 1);
  CHECK(log.count("not writable") == 0);
  const std::string other = key_of(variant_named("fill_random"));
  CHECK(cache.store(other, {"sm_90", "fill_random", true}, bytes_of("FAKE")));
  CHECK(cache.load(other));
  CHECK(temporary_files(tmp.path) == 0);
}

namespace {

// The permission case below for `cache`, opened while its directory was writable, as a
// user whose stores the directory's modes now refuse: 0 where every check held, else a bit
// per failed check.
int refused_store_failures(DiskCache& cache) {
  LogCapture log;
  int failed = 0;
  if (cache.store(key_of(gemm()), {"sm_90", "w8a16_gemm_m16", true}, bytes_of("FAKE"))) {
    failed |= 1;
  }
  if (cache.writable()) failed |= 2;
  // Off for good: the next store is not tried, and the warning is not repeated.
  if (cache.store(key_of(gemm()), {"sm_90", "w8a16_gemm_m16", true}, bytes_of("FAKE"))) {
    failed |= 4;
  }
  if (log.count("not writable") != 1) failed |= 8;
  if (log.count("cannot store") != 0) failed |= 16;
  return failed;
}

}  // namespace

TEST_CASE("a write refused for permission turns stores off for the process, with one warning") {
  TempDir tmp;
  DiskCache cache(DiskCacheConfig::at(tmp.path));
  REQUIRE(cache.writable());
  if (::geteuid() != 0) {
    REQUIRE(::chmod(tmp.path.c_str(), 0555) == 0);
    CHECK(refused_store_failures(cache) == 0);
    REQUIRE(::chmod(tmp.path.c_str(), 0755) == 0);
    return;
  }
  // Modes do not refuse root: the stores run in a child that drops to nobody (65534),
  // for which the directory (root's, 0755) is readable and not writable.
  REQUIRE(::chmod(tmp.path.c_str(), 0755) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(100);
    ::_exit(refused_store_failures(cache));
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 100) {
    MESSAGE("skipped: root here cannot drop to uid 65534 to be refused");
    return;
  }
  CHECK_MESSAGE(WEXITSTATUS(status) == 0, "failed checks (bits): ", WEXITSTATUS(status));
}

TEST_CASE("a store never throws, whatever fails in it") {
  TempDir tmp;
  DiskCache cache(DiskCacheConfig::at(tmp.path));
  const std::string key = key_of(gemm());
  LogCapture log;
  // metrale::Error from encoding the entry.
  CHECK_FALSE(cache.store("not-a-key", {"sm_90", "w8a16_gemm_m16", true}, bytes_of("FAKE")));
  // std::length_error from the entry's buffer: an image longer than any vector may be.
  // The span is never read, as the buffer is refused before anything is copied into it.
  const char byte = 0;
  const std::span<const char> huge(&byte, std::numeric_limits<std::ptrdiff_t>::max());
  CHECK_FALSE(cache.store(key, {"sm_90", "w8a16_gemm_m16", true}, huge));
  CHECK(cache.writable());
  CHECK(log.count("cannot store a kernel cache entry") == 1);
  CHECK(cache.store(key, {"sm_90", "w8a16_gemm_m16", true}, bytes_of("FAKE")));
  CHECK(temporary_files(tmp.path) == 0);
}

TEST_CASE("a discard leaves a newer entry renamed over the name while it runs") {
  TempDir tmp;
  DiskCache disk(DiskCacheConfig::at(tmp.path));
  const std::string key = key_of(gemm());
  REQUIRE(disk.store(key, {"sm_90", "w8a16_gemm_m16", true}, bytes_of("FAKE older")));
  const fs::path path = entry_path(tmp.path, key);
  struct stat older {};
  REQUIRE(::lstat(path.c_str(), &older) == 0);
  // Another process's store landing between the discard's check and its removal.
  bool stored = false;
  int error = -1;
  CHECK_FALSE(remove_if_same_file(path, older.st_dev, older.st_ino, &error, [&] {
    stored = disk.store(key, {"sm_90", "w8a16_gemm_m16", true}, bytes_of("FAKE newer"));
  }));
  CHECK(error == 0);
  CHECK(stored);
  const auto now = disk.load(key);
  REQUIRE(now);
  CHECK(std::string(now->image.begin(), now->image.end()) == "FAKE newer");
  CHECK(temporary_files(tmp.path) == 0);
  // Without a race the file read is removed, and nothing is left beside it.
  CHECK(disk.discard(*now));
  CHECK_FALSE(fs::exists(path));
  CHECK(temporary_files(tmp.path) == 0);
}

TEST_CASE("the environment picks the location; METRALE_KERNEL_CACHE=0 turns it off") {
  EnvVar off("METRALE_KERNEL_CACHE", std::nullopt);
  EnvVar dir("METRALE_KERNEL_CACHE_DIR", std::nullopt);
  EnvVar path("METRALE_KERNEL_CACHE_PATH", "/ro/a::/ro/b");
  EnvVar xdg("XDG_CACHE_HOME", "/xdg");
  EnvVar home("HOME", "/home/someone");
  CHECK(default_cache_directory() == fs::path("/xdg/metrale/kernels"));
  {
    EnvVar no_xdg("XDG_CACHE_HOME", std::nullopt);
    CHECK(default_cache_directory() == fs::path("/home/someone/.cache/metrale/kernels"));
  }
  TempDir tmp;
  EnvVar explicit_dir("METRALE_KERNEL_CACHE_DIR", tmp.path.string());
  DiskCacheConfig config = DiskCacheConfig::from_environment();
  CHECK(config.enabled);
  CHECK(config.directory == tmp.path);
  CHECK(config.read_only_dirs == std::vector<fs::path>{"/ro/a", "/ro/b"});

  LoadingBackend gpu;
  // A substitute compile function never reaches the shared cache.
  test::CountingCompiler compiler;
  CHECK_FALSE(ModuleCache(gpu, compiler.fn()).disk_cache().enabled());
  CHECK(ModuleCache(gpu).disk_cache().enabled());
  for (const char* value : {"0", "off", "FALSE"}) {
    EnvVar disabled("METRALE_KERNEL_CACHE", value);
    CHECK_FALSE(DiskCacheConfig::from_environment().enabled);
    CHECK_FALSE(ModuleCache(gpu).disk_cache().enabled());
  }
}

TEST_CASE("a device newer than NVRTC makes the module cache compile PTX, with a warning") {
  LogCapture log;
  LoadingBackend gpu;
  gpu.target_name = "sm_990";
  test::CountingCompiler compiler;
  std::string seen_target;
  ModuleCache cache(gpu, [&](const CompileRequest& r) {
    seen_target = r.target;
    return compiler.fn()(r);
  });
  CHECK(cache.compile_target().starts_with("compute_"));
  cache.kernel("w8a16_gemm_m16");
  CHECK(seen_target == cache.compile_target());
  CHECK(log.count("compiling PTX for") == 1);
}

TEST_CASE("NVRTC's own output goes to disk and comes back without a compile") {
  TempDir tmp;
  LoadingBackend gpu;
  std::vector<char> compiled;
  {
    ModuleCache cold(gpu, nvrtc_compile, DiskCacheConfig::at(tmp.path));
    cold.kernel("fill_random_bf16");  // the smallest module: no tile constants to check
    CHECK(cold.stats().compiles == 1);
    CHECK(cold.stats().disk_stores == 1);
    compiled = bytes_of(gpu.loaded().back());
  }
  ModuleCache warm(gpu, nvrtc_compile, DiskCacheConfig::at(tmp.path));
  warm.kernel("fill_random_bf16");
  CHECK(warm.stats().compiles == 0);
  CHECK(warm.stats().disk_hits == 1);
  CHECK(bytes_of(gpu.loaded().back()) == compiled);
}

TEST_CASE("trim removes bad entries and stale temporary files, then the oldest") {
  TempDir tmp;
  DiskCache disk(DiskCacheConfig::at(tmp.path));
  std::vector<std::string> keys;
  for (const KernelVariant& v : all_module_builds()) {
    keys.push_back(key_of(v));
    REQUIRE(disk.store(keys.back(), {"sm_90", "same-size", true}, std::vector<char>(1000, 'x')));
  }
  REQUIRE(keys.size() >= 3);
  // Ages: keys[i] is (10 - i) hours old, so keys[0] is the oldest.
  auto age = [](const fs::path& p, int hours) {
    const timespec t{::time(nullptr) - hours * 3600, 0};
    const timespec times[2] = {t, t};
    REQUIRE(::utimensat(AT_FDCWD, p.c_str(), times, 0) == 0);
  };
  for (std::size_t i = 0; i < keys.size(); ++i) {
    age(entry_path(tmp.path, keys[i]), 10 - static_cast<int>(i));
  }
  write_all(tmp.path / ".tmp-abandoned", bytes_of("partial"));
  age(tmp.path / ".tmp-abandoned", 1);
  write_all(tmp.path / ".tmp-live", bytes_of("partial"));
  write_all(entry_path(tmp.path, std::string(64, 'a')), bytes_of("garbage"));

  const std::vector<CacheFileInfo> before = scan_cache(tmp.path);
  CHECK(before.size() == keys.size() + 3);
  const std::uint64_t entry_bytes = fs::file_size(entry_path(tmp.path, keys[0]));
  const TrimResult r = trim_cache(tmp.path, entry_bytes * (keys.size() - 1));
  CHECK(r.files_removed == 3);  // the garbage, the abandoned write, the oldest entry
  CHECK_FALSE(fs::exists(entry_path(tmp.path, keys[0])));
  CHECK(fs::exists(entry_path(tmp.path, keys[1])));
  CHECK(fs::exists(tmp.path / ".tmp-live"));
  CHECK(r.bytes_left == entry_bytes * (keys.size() - 1));
}

namespace {

// An entry as a library of another cache format version may have written it: magic and
// version are what every version shares; the rest here is this version's layout.
void write_entry_of_version(const fs::path& dir, const std::string& key,
                            std::uint32_t version) {
  std::vector<char> bytes =
      encode_cache_entry(key, {"sm_90", "w8a16_gemm_m16", true}, bytes_of("FAKE"));
  for (int i = 0; i < 4; ++i) bytes[8 + i] = static_cast<char>((version >> (8 * i)) & 0xFF);
  write_all(entry_path(dir, key), bytes);
}

}  // namespace

TEST_CASE("entries of other cache format versions are reported as such and kept unless asked") {
  TempDir tmp;
  const std::string current = key_of(gemm());
  const std::string older(64, 'b');
  const std::string newer(64, 'c');
  const std::string garbage(64, 'a');
  const auto write_all_four = [&] {
    store_gemm_entry(tmp.path, current, "FAKE N_TILE=32");
    write_entry_of_version(tmp.path, older, kCacheFormatVersion - 1);
    write_entry_of_version(tmp.path, newer, kCacheFormatVersion + 1);
    write_all(entry_path(tmp.path, garbage), bytes_of("garbage"));
  };
  write_all_four();
  const std::vector<CacheFileInfo> scanned = scan_cache(tmp.path);
  REQUIRE(scanned.size() == 4);
  for (const CacheFileInfo& f : scanned) {
    CAPTURE(f.key);
    const bool other = f.key == older || f.key == newer;
    CHECK(f.other_version == other);
    CHECK(f.problem.empty() == (f.key != garbage));
    if (f.key == older) CHECK(f.format_version == kCacheFormatVersion - 1);
    if (f.key == newer) CHECK(f.format_version == kCacheFormatVersion + 1);
  }
  const auto left = [&] {
    std::vector<std::string> keys;
    for (const std::string& k : {current, older, newer, garbage}) {
      if (fs::exists(entry_path(tmp.path, k))) keys.push_back(k);
    }
    return keys;
  };

  CHECK(remove_bad_entries(scanned) == 1);
  CHECK(left() == std::vector<std::string>{current, older, newer});
  write_all_four();
  CHECK(trim_cache(tmp.path, std::numeric_limits<std::uint64_t>::max()).files_removed == 1);
  CHECK(left() == std::vector<std::string>{current, older, newer});

  write_all_four();
  CHECK(remove_bad_entries(scan_cache(tmp.path), nullptr, OtherVersions::remove) == 3);
  CHECK(left() == std::vector<std::string>{current});
  write_all_four();
  const TrimResult r =
      trim_cache(tmp.path, std::numeric_limits<std::uint64_t>::max(), OtherVersions::remove);
  CHECK(r.files_removed == 3);
  CHECK(left() == std::vector<std::string>{current});

  // Kept, they still count towards the size and go oldest first like any valid entry.
  write_all_four();
  const timespec long_ago[2] = {{::time(nullptr) - 3600, 0}, {::time(nullptr) - 3600, 0}};
  REQUIRE(::utimensat(AT_FDCWD, entry_path(tmp.path, older).c_str(), long_ago, 0) == 0);
  const std::uint64_t younger_bytes =
      fs::file_size(entry_path(tmp.path, current)) + fs::file_size(entry_path(tmp.path, newer));
  CHECK(trim_cache(tmp.path, younger_bytes).files_removed == 2);  // the garbage, then older
  CHECK(left() == std::vector<std::string>{current, newer});
}

TEST_CASE("removing the bad entries scanned leaves a good one written under the name since") {
  TempDir tmp;
  DiskCache disk(DiskCacheConfig::at(tmp.path));
  const std::string key = key_of(all_module_builds().front());
  write_all(entry_path(tmp.path, key), bytes_of("garbage"));
  const std::vector<CacheFileInfo> scanned = scan_cache(tmp.path);
  REQUIRE(scanned.size() == 1);
  CHECK_FALSE(scanned[0].problem.empty());
  // Another process stores a valid entry under that name (a new file, renamed over it).
  REQUIRE(disk.store(key, {"sm_90", "after the scan", true}, std::vector<char>(1000, 'x')));
  RemovalFailures failed;
  CHECK(remove_bad_entries(scanned, &failed) == 0);
  CHECK(failed.files == 0);  // replaced meanwhile: nothing failed
  const std::vector<CacheFileInfo> after = scan_cache(tmp.path);
  REQUIRE(after.size() == 1);
  CHECK(after[0].problem.empty());
  // The file scanned is still removed when it is still there.
  write_all(entry_path(tmp.path, key), bytes_of("garbage"));
  CHECK(remove_bad_entries(scan_cache(tmp.path)) == 1);
  CHECK_FALSE(fs::exists(entry_path(tmp.path, key)));
}

TEST_CASE("an entry whose unlink fails is counted as not removed, with its path and reason") {
  // unlink(2) refuses a directory even to root, who may write in a read-only directory.
  TempDir tmp;
  const fs::path dir = tmp.path / "a-directory";
  REQUIRE(fs::create_directory(dir));
  struct stat st {};
  REQUIRE(::lstat(dir.c_str(), &st) == 0);
  CacheFileInfo f;
  f.path = dir;
  f.problem = "bad";
  f.device = static_cast<std::uint64_t>(st.st_dev);
  f.inode = static_cast<std::uint64_t>(st.st_ino);
  RemovalFailures failed;
  CHECK(remove_bad_entries({f}, &failed) == 0);
  CHECK(failed.files == 1);
  CHECK(failed.first.find(dir.string() + ": ") == 0);
  CHECK(failed.first.size() > dir.string().size() + 2);
  CHECK(fs::is_directory(dir));
}

TEST_CASE("16 processes filling one empty directory at once all succeed") {
  TempDir tmp;
  const fs::path dir = tmp.path / "shared";  // created by the racing processes themselves
  int gate[2];
  REQUIRE(::pipe(gate) == 0);
  std::vector<pid_t> children;
  for (int i = 0; i < 16; ++i) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::close(gate[1]);
      char c;
      while (::read(gate[0], &c, 1) > 0) {
      }
      int code = 1;
      try {
        LoadingBackend gpu;
        test::CountingCompiler compiler;
        compiler.delay = std::chrono::milliseconds(20);
        ModuleCache cache(gpu, compiler.fn(), DiskCacheConfig::at(dir));
        cache.warm_up();
        const ModuleCacheStats s = cache.stats();
        code = s.compiles + s.disk_hits == all_module_builds().size() ? 0 : 2;
      } catch (...) {
        code = 3;
      }
      ::_exit(code);  // no doctest teardown in the child
    }
    children.push_back(pid);
  }
  ::close(gate[0]);
  ::close(gate[1]);  // releases every child at once
  for (pid_t pid : children) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  const std::vector<CacheFileInfo> files = scan_cache(dir);
  CHECK(files.size() == all_module_builds().size());
  for (const CacheFileInfo& f : files) {
    CHECK_FALSE(f.temporary);
    CHECK(f.problem.empty());
  }
}
