#include "driver_api.hpp"

#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <mutex>
#include <string>
#include <type_traits>

#include "metrale/error.hpp"
#include "metrale/log.hpp"

namespace metrale::driver {

std::string describe_with(const Api& table, CUresult result);

namespace {

using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t,
                                    CUdriverProcAddressQueryResult*);

// The table plus what went wrong loading it; loaded once, never unloaded (the driver
// outlives every module and context the process creates).
struct Loaded {
  Api api;
  std::string error;
};

Loaded load() {
  Loaded out;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    out.error = fmt::format("no CUDA driver: libcuda.so.1 not found ({})",
                            why != nullptr ? why : "dlopen failed");
    return out;
  }
  auto get_proc = reinterpret_cast<GetProcAddress>(dlsym(lib, "cuGetProcAddress_v2"));
  if (get_proc == nullptr) {
    out.error = "CUDA driver too old: libcuda.so.1 has no cuGetProcAddress_v2 "
                "(a driver for CUDA 12.5 or newer is required)";
    return out;
  }
  auto resolve = [&](const char* name, void** slot, int version) {
    CUdriverProcAddressQueryResult status{};
    CUresult r = get_proc(name, slot, version, CU_GET_PROC_ADDRESS_DEFAULT, &status);
    if (r != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS || *slot == nullptr) {
      if (out.error.empty()) {
        out.error = fmt::format(
            "CUDA driver lacks {} of CUDA {}.{} (cuGetProcAddress result {}, status {}); "
            "update the NVIDIA driver",
            name, version / 1000, (version % 1000) / 10, static_cast<int>(r),
            static_cast<int>(status));
      }
    }
  };
  // The slot's type is cuda.h's for the name; the ABI fetched must be that one.
#define METRALE_DRIVER_FN(name, version)                                                 \
  static_assert(std::is_same_v<decltype(&::name), PFN_##name##_v##version>,               \
                #name ": driver_functions.inc names an ABI version other than cuda.h's"); \
  resolve(#name, reinterpret_cast<void**>(&out.api.name), version);
#include "driver_functions.inc"
#undef METRALE_DRIVER_FN
  if (!out.error.empty()) return out;
  CUresult r = out.api.cuInit(0);
  // A driver with no device to show (none installed, or CUDA_VISIBLE_DEVICES hides all)
  // is a machine without a device, reported as such, not a driver failure.
  if (r == CUDA_ERROR_NO_DEVICE) {
    out.error = fmt::format("no CUDA device: cuInit found none ({})", describe_with(out.api, r));
    return out;
  }
  if (r != CUDA_SUCCESS) {
    out.error = fmt::format("cuInit failed: {}", describe_with(out.api, r));
    return out;
  }
  int version = 0;
  // Only a log line depends on the version, so a driver that will not tell it still loads.
  if (const CUresult v = out.api.cuDriverGetVersion(&version); v != CUDA_SUCCESS) {
    logger()->debug("CUDA driver loaded; cuDriverGetVersion failed: {}",
                    describe_with(out.api, v));
    return out;
  }
  logger()->debug("CUDA driver loaded: version {}.{}", version / 1000, (version % 1000) / 10);
  return out;
}

}  // namespace

std::string describe_with(const Api& api, CUresult result);

const Api& api() {
  static const Loaded loaded = load();  // thread-safe initialisation
  if (!loaded.error.empty()) throw Error(loaded.error);
  return loaded.api;
}

std::string describe_with(const Api& table, CUresult result) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (table.cuGetErrorName != nullptr) table.cuGetErrorName(result, &name);
  if (table.cuGetErrorString != nullptr) table.cuGetErrorString(result, &text);
  return fmt::format("{} ({})", name != nullptr ? name : fmt::format("CUresult {}", static_cast<int>(result)),
                     text != nullptr ? text : "no description");
}

std::string describe(CUresult result) { return describe_with(api(), result); }

bool is_capture_error(CUresult result) {
  return result == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED ||
         result == CUDA_ERROR_STREAM_CAPTURE_IMPLICIT ||
         result == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
}

void check(CUresult result, std::string_view call) {
  if (result == CUDA_SUCCESS) return;
  // Loading a module, resolving its entries and reading its constants are not allowed
  // while a global-mode capture runs: the usual cause is a kernel's first use inside it.
  if (is_capture_error(result)) {
    throw Error(fmt::format("{} failed: {}; if a kernel was first used during CUDA graph "
                            "capture: call warm_up() before capturing",
                            call, describe(result)));
  }
  throw Error(fmt::format("{} failed: {}", call, describe(result)));
}

}  // namespace metrale::driver
