// The CUDA Driver API, resolved at run time. libcuda.so.1 is opened with dlopen and
// every entry point is fetched through cuGetProcAddress, so nothing links against
// libcuda and a machine without a driver gets an Error instead of a loader failure.
#pragma once

#include <cuda.h>

#include <string_view>

namespace metrale::driver {

struct Api {
#define METRALE_DRIVER_FN(name, version) decltype(&::name) name = nullptr;
#include "driver_functions.inc"
#undef METRALE_DRIVER_FN
};

// The loaded table, with cuInit(0) done. Throws Error("no CUDA driver: ...") when
// libcuda.so.1 cannot be opened, or the error of cuInit. Thread-safe; loads once.
const Api& api();

// Throws Error naming `call` with the driver's error name and text unless CUDA_SUCCESS.
void check(CUresult result, std::string_view call);

// "CUDA_ERROR_X (text)" for a result code, for messages.
std::string describe(CUresult result);

// True for the errors a stream capture gives to calls it forbids or that follow them.
bool is_capture_error(CUresult result);

}  // namespace metrale::driver

// Calls the driver through the table and checks the result, naming the call.
#define METRALE_CU(call_name, ...) \
  ::metrale::driver::check(::metrale::driver::api().call_name(__VA_ARGS__), #call_name)
