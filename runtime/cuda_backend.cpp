#include "metrale/cuda_backend.hpp"

#include <array>
#include <cstdint>
#include <vector>

#include "driver_api.hpp"
#include "metrale/error.hpp"
#include "metrale/log.hpp"

namespace metrale {
namespace {

CUcontext as_context(void* c) { return static_cast<CUcontext>(c); }

void make_context_current(CUcontext context) {
  CUcontext current = nullptr;
  METRALE_CU(cuCtxGetCurrent, &current);
  if (current != context) METRALE_CU(cuCtxSetCurrent, context);
}

// `context` current for one call into the library, the caller's current context given
// back after it: an engine's thread keeps its own device (the one its runtime API calls
// use) across calls. A thread that had none current keeps this one. When the caller's is
// this one already, as for an engine on this device, it costs one cuCtxGetCurrent.
class CurrentContext {
 public:
  explicit CurrentContext(CUcontext context) {
    METRALE_CU(cuCtxGetCurrent, &previous_);
    if (previous_ != context) {
      METRALE_CU(cuCtxSetCurrent, context);
      restore_ = previous_ != nullptr;
    }
  }
  ~CurrentContext() {
    if (!restore_) return;
    // A destructor cannot throw; the thread is left on this backend's context.
    const CUresult r = driver::api().cuCtxSetCurrent(previous_);
    if (r != CUDA_SUCCESS) logger()->error("cuCtxSetCurrent failed: {}", driver::describe(r));
  }
  CurrentContext(const CurrentContext&) = delete;
  CurrentContext& operator=(const CurrentContext&) = delete;

 private:
  CUcontext previous_ = nullptr;
  bool restore_ = false;
};

// A non-blocking stream of the current context for one call, destroyed on every path.
class ScopedStream {
 public:
  ScopedStream() { METRALE_CU(cuStreamCreate, &stream_, CU_STREAM_NON_BLOCKING); }
  ~ScopedStream() {
    // A destructor cannot throw; a failure here leaks one stream and is only logged.
    const CUresult r = driver::api().cuStreamDestroy(stream_);
    if (r != CUDA_SUCCESS) logger()->error("cuStreamDestroy failed: {}", driver::describe(r));
  }
  ScopedStream(const ScopedStream&) = delete;
  ScopedStream& operator=(const ScopedStream&) = delete;
  CUstream get() const { return stream_; }

 private:
  CUstream stream_ = nullptr;
};

// A module built while a capture forbids it: say which warm-up was missing.
[[noreturn]] void fail_first_use_in_capture(std::string_view module, CUresult r) {
  fail("module {} first used during CUDA graph capture: call warm_up() before capturing ({})",
       module, driver::describe(r));
}

class CudaModule final : public LoadedModule {
 public:
  CudaModule(CUmodule module, CUcontext context, std::string label, int shared_optin)
      : module_(module), context_(context), label_(std::move(label)), shared_optin_(shared_optin) {}
  ~CudaModule() override {
    // Unloading needs no current context; a failure has no caller to go to, so it is
    // logged as the other handles' releases are.
    const CUresult r = driver::api().cuModuleUnload(module_);
    if (r != CUDA_SUCCESS) {
      logger()->error("cuModuleUnload of {} failed: {}", label_, driver::describe(r));
    }
  }
  CudaModule(const CudaModule&) = delete;
  CudaModule& operator=(const CudaModule&) = delete;

  void* function(std::string_view entry) const override {
    CUfunction fn = nullptr;
    std::string name(entry);
    CUresult r = driver::api().cuModuleGetFunction(&fn, module_, name.c_str());
    if (r != CUDA_SUCCESS) {
      fail("module {} has no entry {}: cuModuleGetFunction failed: {}", label_, entry,
           driver::describe(r));
    }
    // Entries that size their shared memory at launch (the split-K entry's ring) may take
    // up to the device's opt-in limit; raising the limit costs nothing to the others.
    int static_bytes = 0;
    METRALE_CU(cuFuncGetAttribute, &static_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn);
    METRALE_CU(cuFuncSetAttribute, fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
               shared_optin_ - static_bytes);
    return fn;
  }

  std::uint32_t read_global_u32(std::string_view name) const override {
    CUdeviceptr ptr = 0;
    std::size_t bytes = 0;
    std::string n(name);
    CUresult r = driver::api().cuModuleGetGlobal(&ptr, &bytes, module_, n.c_str());
    if (r != CUDA_SUCCESS) {
      fail("module {} has no global {}: cuModuleGetGlobal failed: {}", label_, name,
           driver::describe(r));
    }
    if (bytes != sizeof(std::uint32_t)) {
      fail("module {}: global {} is {} bytes, expected 4", label_, name, bytes);
    }
    // Not cuMemcpyDtoH: it runs on the legacy default stream, which CUDA forbids while
    // another thread captures a blocking stream of this context (relaxed or thread-local
    // mode); the copy would fail and invalidate that thread's capture. A non-blocking
    // stream does not synchronize with the legacy one.
    const CurrentContext current(context_);
    const ScopedStream stream;
    std::uint32_t value = 0;
    METRALE_CU(cuMemcpyDtoHAsync, &value, ptr, sizeof(value), stream.get());
    METRALE_CU(cuStreamSynchronize, stream.get());
    return value;
  }

 private:
  CUmodule module_;
  CUcontext context_;  // the loading backend's primary context, retained by it
  std::string label_;
  int shared_optin_;  // the device's opt-in shared memory per block, bytes
};

}  // namespace

int cuda_device_count() {
  int count = 0;
  METRALE_CU(cuDeviceGetCount, &count);
  return count;
}

std::string cuda_unavailable_reason() {
  try {
    if (cuda_device_count() == 0) return "no CUDA device: the driver reports 0 devices";
    return {};
  } catch (const Error& e) {
    return e.what();
  }
}

namespace {

CUdevice existing_device(int ordinal) {
  const int count = cuda_device_count();
  if (count == 0) fail("no CUDA device: the driver reports 0 devices");
  if (ordinal < 0 || ordinal >= count) {
    fail("CUDA device {} does not exist (the driver reports {} device(s))", ordinal, count);
  }
  CUdevice dev = 0;
  METRALE_CU(cuDeviceGet, &dev, ordinal);
  return dev;
}

int device_attribute(CUdevice dev, CUdevice_attribute a) {
  int v = 0;
  METRALE_CU(cuDeviceGetAttribute, &v, a, dev);
  return v;
}

// GB/s from the peak memory clock (kHz) and the bus width (bits), two transfers a clock.
std::uint32_t dram_gbps(int clock_khz, int bus_bits) {
  if (clock_khz <= 0 || bus_bits <= 0) return 0;
  return static_cast<std::uint32_t>(std::uint64_t{static_cast<std::uint32_t>(clock_khz)} * 2 *
                                    static_cast<std::uint32_t>(bus_bits) / 8 / 1'000'000);
}

}  // namespace

std::string cuda_device_target(int ordinal) {
  const CUdevice dev = existing_device(ordinal);
  DeviceInfo info;
  info.cc_major = device_attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  info.cc_minor = device_attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  return info.target();
}

CudaBackend::CudaBackend(int ordinal) {
  const CUdevice dev = existing_device(ordinal);
  device_ = dev;
  std::array<char, 256> name{};
  METRALE_CU(cuDeviceGetName, name.data(), static_cast<int>(name.size()), dev);
  auto attr = [&](CUdevice_attribute a) { return device_attribute(dev, a); };
  info_.ordinal = ordinal;
  info_.name = name.data();
  info_.cc_major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  info_.cc_minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  info_.sm_count = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  info_.l2_bytes = static_cast<std::size_t>(attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE));
  info_.shared_optin_bytes = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  METRALE_CU(cuDeviceTotalMem, &info_.total_memory, dev);
  info_.dram_gbps = dram_gbps(attr(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE),
                              attr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH));
  CUcontext ctx = nullptr;
  METRALE_CU(cuDevicePrimaryCtxRetain, &ctx, dev);
  context_ = ctx;
  logger()->debug("CUDA device {}: {} ({}), {} SMs, {} GB/s of DRAM bandwidth", ordinal,
                  info_.name, info_.target(), info_.sm_count, info_.dram_gbps);
}

CudaBackend::~CudaBackend() {
  if (context_ == nullptr) return;
  const CUresult r = driver::api().cuDevicePrimaryCtxRelease(device_);
  if (r != CUDA_SUCCESS) {
    logger()->error("cuDevicePrimaryCtxRelease failed: {}", driver::describe(r));
  }
}

ContextId CudaBackend::context() const { return reinterpret_cast<ContextId>(context_); }

void CudaBackend::make_current() const { make_context_current(as_context(context_)); }

std::unique_ptr<LoadedModule> CudaBackend::load_module(std::span<const char> image,
                                                       std::string_view label) const {
  const CurrentContext current(as_context(context_));
  CUmodule module = nullptr;
  CUresult r = driver::api().cuModuleLoadData(&module, image.data());
  if (r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION) {
    fail("loading module {} failed: {}: the PTX was generated by an NVRTC newer than this "
         "driver supports; upgrade the NVIDIA driver or use an NVRTC no newer than it",
         label, driver::describe(r));
  }
  if (driver::is_capture_error(r)) {
    fail_first_use_in_capture(label, r);
  }
  if (r != CUDA_SUCCESS) {
    fail("loading module {} failed: cuModuleLoadData: {}", label, driver::describe(r));
  }
  return std::make_unique<CudaModule>(module, as_context(context_), std::string(label),
                                      info_.shared_optin_bytes);
}

void CudaBackend::check_not_capturing(std::string_view module) const {
  // No call reports "a capture is running" without its stream; an allocation is one of
  // the calls a global-mode capture forbids, and it is cheap next to a compile.
  const CurrentContext current(as_context(context_));
  CUdeviceptr probe = 0;
  const CUresult r = driver::api().cuMemAlloc(&probe, 256);
  if (r == CUDA_SUCCESS) {
    METRALE_CU(cuMemFree, probe);
    return;
  }
  if (driver::is_capture_error(r)) {
    fail_first_use_in_capture(module, r);
  }
  // Any other failure (the device's memory taken by the engine's allocator, say) tells
  // nothing of a capture, and the module's load reports its own error if it has one.
  logger()->debug("capture probe before loading {}: cuMemAlloc of 256 bytes failed: {}",
                  module, driver::describe(r));
}

TensorMapBytes CudaBackend::tensor_map_2d(const TensorMap2dRequest& r) const {
  static_assert(sizeof(TensorMapBytes) == sizeof(CUtensorMap));
  TensorMapBytes out;
  const cuuint64_t dims[2] = {r.cols, r.rows};
  const cuuint64_t pitch[1] = {r.row_pitch};
  const cuuint32_t box[2] = {r.box_cols, r.box_rows};
  const cuuint32_t strides[2] = {1, 1};
  const CUresult res = driver::api().cuTensorMapEncodeTiled(
      reinterpret_cast<CUtensorMap*>(&out),
      r.element_bytes == 1 ? CU_TENSOR_MAP_DATA_TYPE_UINT8 : CU_TENSOR_MAP_DATA_TYPE_UINT16, 2,
      reinterpret_cast<void*>(r.base.address), dims, pitch, box, strides,
      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (res != CUDA_SUCCESS) {
    fail("cuTensorMapEncodeTiled ({} x {} elements of {} bytes, pitch {}, box {} x {}) failed: "
         "{}",
         r.cols, r.rows, r.element_bytes, r.row_pitch, r.box_cols, r.box_rows,
         driver::describe(res));
  }
  return out;
}

void CudaBackend::launch(const KernelHandle& kernel, const LaunchConfig& config,
                         std::span<const KernelArg> args, StreamHandle stream) const {
  if (kernel.function == nullptr) fail("launch: empty kernel handle");
  if (kernel.context != context()) {
    fail("launch of {}: the kernel handle belongs to another CUDA context than this "
         "backend's (device {})",
         kernel.name != nullptr ? kernel.name : "?", info_.ordinal);
  }
  const CurrentContext current(as_context(context_));
  std::array<void*, 32> params{};
  if (args.size() > params.size()) fail("launch: {} arguments exceed 32", args.size());
  for (std::size_t i = 0; i < args.size(); ++i) params[i] = const_cast<void*>(args[i].value);

  // The plain launch is the cheaper driver path; attributes need the extended one.
  if (config.cluster.x == 0 && !config.programmatic_dependent) {
    const CUresult r = driver::api().cuLaunchKernel(
        static_cast<CUfunction>(kernel.function), config.grid.x, config.grid.y, config.grid.z,
        config.block.x, config.block.y, config.block.z, config.shared_bytes,
        reinterpret_cast<CUstream>(stream), params.data(), nullptr);
    if (r != CUDA_SUCCESS) {
      fail("cuLaunchKernel of {} (grid {}x{}x{}, block {}x{}x{}) failed: {}",
           kernel.name != nullptr ? kernel.name : "?", config.grid.x, config.grid.y,
           config.grid.z, config.block.x, config.block.y, config.block.z, driver::describe(r));
    }
    return;
  }
  CUlaunchConfig cfg{};
  cfg.gridDimX = config.grid.x;
  cfg.gridDimY = config.grid.y;
  cfg.gridDimZ = config.grid.z;
  cfg.blockDimX = config.block.x;
  cfg.blockDimY = config.block.y;
  cfg.blockDimZ = config.block.z;
  cfg.sharedMemBytes = config.shared_bytes;
  cfg.hStream = reinterpret_cast<CUstream>(stream);
  std::array<CUlaunchAttribute, 2> attrs{};
  unsigned n_attrs = 0;
  if (config.cluster.x != 0) {
    attrs[n_attrs].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attrs[n_attrs].value.clusterDim.x = config.cluster.x;
    attrs[n_attrs].value.clusterDim.y = config.cluster.y;
    attrs[n_attrs].value.clusterDim.z = config.cluster.z;
    ++n_attrs;
  }
  if (config.programmatic_dependent) {
    attrs[n_attrs].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attrs[n_attrs].value.programmaticStreamSerializationAllowed = 1;
    ++n_attrs;
  }
  cfg.attrs = attrs.data();
  cfg.numAttrs = n_attrs;
  CUresult r = driver::api().cuLaunchKernelEx(&cfg, static_cast<CUfunction>(kernel.function),
                                              params.data(), nullptr);
  if (r != CUDA_SUCCESS) {
    fail("cuLaunchKernelEx of {} (grid {}x{}x{}, block {}x{}x{}) failed: {}",
         kernel.name != nullptr ? kernel.name : "?", config.grid.x, config.grid.y,
         config.grid.z, config.block.x, config.block.y, config.block.z, driver::describe(r));
  }
}

KernelAttributes CudaBackend::attributes(const KernelHandle& kernel) const {
  auto fn = static_cast<CUfunction>(kernel.function);
  auto get = [&](CUfunction_attribute a) {
    int v = 0;
    METRALE_CU(cuFuncGetAttribute, &v, a, fn);
    return v;
  };
  KernelAttributes out;
  out.registers = get(CU_FUNC_ATTRIBUTE_NUM_REGS);
  out.local_bytes = get(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
  out.static_shared_bytes = get(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
  out.max_threads_per_block = get(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  return out;
}

DevicePtr CudaBackend::allocate(std::size_t bytes) const {
  const CurrentContext current(as_context(context_));
  CUdeviceptr p = 0;
  CUresult r = driver::api().cuMemAlloc(&p, bytes == 0 ? 1 : bytes);
  if (r != CUDA_SUCCESS) {
    fail("cuMemAlloc of {} bytes on device {} failed: {}", bytes, info_.ordinal,
         driver::describe(r));
  }
  return DevicePtr(p);
}

void CudaBackend::release(DevicePtr p) const noexcept {
  if (p.address == 0) return;
  CUresult r = driver::api().cuMemFree(p.address);
  if (r != CUDA_SUCCESS) logger()->error("cuMemFree failed: {}", driver::describe(r));
}

void CudaBackend::upload(DevicePtr dst, const void* src, std::size_t bytes) const {
  const CurrentContext current(as_context(context_));
  METRALE_CU(cuMemcpyHtoD, dst.address, src, bytes);
}

void CudaBackend::download(void* dst, DevicePtr src, std::size_t bytes) const {
  const CurrentContext current(as_context(context_));
  METRALE_CU(cuMemcpyDtoH, dst, src.address, bytes);
}

void CudaBackend::fill_bytes(DevicePtr dst, std::uint8_t value, std::size_t bytes) const {
  const CurrentContext current(as_context(context_));
  METRALE_CU(cuMemsetD8, dst.address, value, bytes);
}

void CudaBackend::synchronize() const {
  const CurrentContext current(as_context(context_));
  METRALE_CU(cuCtxSynchronize);
}

}  // namespace metrale
