// A stand-in libcuda.so.1 for the driver-table tests (test_fake_driver.cpp). Its
// cuGetProcAddress_v2 hands out entry points by name and ABI version as a CUDA 13 driver
// does, for the few calls a backend makes to come up and synchronize:
//   - METRALE_FAKE_DRIVER=no-device: cuInit answers CUDA_ERROR_NO_DEVICE, as a real driver
//     does where no GPU is present or CUDA_VISIBLE_DEVICES hides them all;
//   - METRALE_FAKE_DRIVER=no-version: as otherwise, but cuDriverGetVersion fails;
//   - otherwise one device of compute capability 9.0.
// "cuCtxSynchronize" at version 13000 or later is cuCtxSynchronize_v2(CUcontext), as in
// CUDA 13; the fake's form of it refuses every call, so a table that fetches it there
// and calls it through cuda.h's (void) type fails, whatever its argument register holds.
// Every call the tests do not expect answers CUDA_ERROR_NOT_SUPPORTED.
#include <cuda.h>

#include <cstdlib>
#include <cstring>

namespace {

CUcontext current = nullptr;
CUcontext const primary = reinterpret_cast<CUcontext>(0x1000);

bool mode_is(const char* name) {
  const char* mode = std::getenv("METRALE_FAKE_DRIVER");
  return mode != nullptr && std::strcmp(mode, name) == 0;
}

CUresult init(unsigned) { return mode_is("no-device") ? CUDA_ERROR_NO_DEVICE : CUDA_SUCCESS; }
CUresult driver_version(int* v) {
  if (mode_is("no-version")) return CUDA_ERROR_NOT_SUPPORTED;
  *v = 13000;
  return CUDA_SUCCESS;
}
CUresult error_name(CUresult r, const char** s) {
  *s = r == CUDA_ERROR_NO_DEVICE ? "CUDA_ERROR_NO_DEVICE" : "CUDA_ERROR_FAKE";
  return CUDA_SUCCESS;
}
CUresult error_string(CUresult, const char** s) {
  *s = "from the fake driver";
  return CUDA_SUCCESS;
}
CUresult device_count(int* n) { *n = 1; return CUDA_SUCCESS; }
CUresult device_get(CUdevice* d, int ordinal) {
  if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
  *d = 0;
  return CUDA_SUCCESS;
}
CUresult device_name(char* name, int len, CUdevice) {
  std::strncpy(name, "fake device", static_cast<std::size_t>(len));
  return CUDA_SUCCESS;
}
CUresult device_attribute(int* v, CUdevice_attribute a, CUdevice) {
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = 60 << 20; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = 232448; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *v = 2619000; break;  // kHz, an H100's HBM3
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: *v = 5120; break;
    default: *v = 0;
  }
  return CUDA_SUCCESS;
}
CUresult total_mem(size_t* bytes, CUdevice) { *bytes = size_t{1} << 34; return CUDA_SUCCESS; }
CUresult retain(CUcontext* c, CUdevice) { *c = primary; return CUDA_SUCCESS; }
CUresult release(CUdevice) { return CUDA_SUCCESS; }
CUresult get_current(CUcontext* c) { *c = current; return CUDA_SUCCESS; }
CUresult set_current(CUcontext c) { current = c; return CUDA_SUCCESS; }
CUresult synchronize() { return current == primary ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT; }
CUresult synchronize_v2(CUcontext) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult unexpected() { return CUDA_ERROR_NOT_SUPPORTED; }
// What a first use of a kernel reaches after its compile, each with its own type (a call
// through another function type is undefined): no memory, and no module.
CUresult mem_alloc(CUdeviceptr*, size_t) { return CUDA_ERROR_OUT_OF_MEMORY; }
CUresult module_load_data(CUmodule*, const void*) { return CUDA_ERROR_NOT_SUPPORTED; }

struct Entry {
  const char* name;
  int since;  // the ABI version this form is served from
  void* fn;
};

// Newer forms of a name before older ones.
const Entry kEntries[] = {
    {"cuInit", 2000, reinterpret_cast<void*>(&init)},
    {"cuDriverGetVersion", 2020, reinterpret_cast<void*>(&driver_version)},
    {"cuGetErrorName", 6000, reinterpret_cast<void*>(&error_name)},
    {"cuGetErrorString", 6000, reinterpret_cast<void*>(&error_string)},
    {"cuDeviceGetCount", 2000, reinterpret_cast<void*>(&device_count)},
    {"cuDeviceGet", 2000, reinterpret_cast<void*>(&device_get)},
    {"cuDeviceGetName", 2000, reinterpret_cast<void*>(&device_name)},
    {"cuDeviceGetAttribute", 2000, reinterpret_cast<void*>(&device_attribute)},
    {"cuDeviceTotalMem", 3020, reinterpret_cast<void*>(&total_mem)},
    {"cuDevicePrimaryCtxRetain", 7000, reinterpret_cast<void*>(&retain)},
    {"cuDevicePrimaryCtxRelease", 11000, reinterpret_cast<void*>(&release)},
    {"cuCtxGetCurrent", 4000, reinterpret_cast<void*>(&get_current)},
    {"cuCtxSetCurrent", 4000, reinterpret_cast<void*>(&set_current)},
    {"cuCtxSynchronize", 13000, reinterpret_cast<void*>(&synchronize_v2)},
    {"cuCtxSynchronize", 2000, reinterpret_cast<void*>(&synchronize)},
    {"cuMemAlloc", 3020, reinterpret_cast<void*>(&mem_alloc)},
    {"cuModuleLoadData", 2000, reinterpret_cast<void*>(&module_load_data)},
};

}  // namespace

extern "C" CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version,
                                        cuuint64_t, CUdriverProcAddressQueryResult* status) {
  for (const Entry& e : kEntries) {
    if (std::strcmp(e.name, symbol) == 0 && version >= e.since) {
      *pfn = e.fn;
      *status = CU_GET_PROC_ADDRESS_SUCCESS;
      return CUDA_SUCCESS;
    }
  }
  *pfn = reinterpret_cast<void*>(&unexpected);
  *status = CU_GET_PROC_ADDRESS_SUCCESS;
  return CUDA_SUCCESS;
}
