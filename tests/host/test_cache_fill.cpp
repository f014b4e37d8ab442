// Ahead-of-time fills of the persistent cache without a device: compile_through_cache
// (what `metrale compile` runs per variant) and a compile-only service's warm_up.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "metrale/cache_fill.hpp"
#include "metrale/kernel_service.hpp"

using namespace metrale;
namespace fs = std::filesystem;

namespace {

// A fresh directory under /tmp, removed at the end of the scope.
struct ScratchDir {
  fs::path path;
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "metrale-fill-XXXXXX").string();
    path = mkdtemp(pattern.data());
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::size_t files() const {
    std::size_t n = 0;
    for (const auto& e : fs::directory_iterator(path)) n += e.is_regular_file() ? 1 : 0;
    return n;
  }
};

}  // namespace

TEST_CASE("compile_through_cache compiles and stores once, then serves the entry") {
  ScratchDir dir;
  DiskCache cache(DiskCacheConfig::at(dir.path));
  const KernelVariant& v = variant_named("fill_random");
  const CacheFill first = compile_through_cache(cache, v, "sm_90");
  CHECK_FALSE(first.from_cache);
  CHECK(first.stored);
  CHECK(dir.files() == 1);
  const CacheFill second = compile_through_cache(cache, v, "sm_90");
  CHECK(second.from_cache);
  CHECK_FALSE(second.stored);
  CHECK(second.image == first.image);
  // Another target is another entry.
  CHECK(compile_through_cache(cache, v, "sm_80").stored);
  CHECK(dir.files() == 2);
}

TEST_CASE("a compile-only service's warm_up fills the persistent cache") {
  ScratchDir dir;
  const char* old = std::getenv("METRALE_KERNEL_CACHE_DIR");
  const std::string saved = old != nullptr ? old : "";
  setenv("METRALE_KERNEL_CACHE_DIR", dir.path.c_str(), 1);
  KernelService service(KernelService::CompileOnly{"sm_90"});
  const std::string variants[] = {"fill_random", "w8a16_gemv_batch16"};
  service.warm_up(variants);
  if (old != nullptr) {
    setenv("METRALE_KERNEL_CACHE_DIR", saved.c_str(), 1);
  } else {
    unsetenv("METRALE_KERNEL_CACHE_DIR");
  }
  CHECK(dir.files() == 2);
}
