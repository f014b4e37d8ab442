// A non-blocking CUDA stream of the tests' device, owned for a scope.
#pragma once

#include "driver_api.hpp"
#include "gpu/gpu_fixture.hpp"
#include "metrale/error.hpp"

namespace metrale::test {

class OwnedStream {
 public:
  OwnedStream() {
    gpu().backend.make_current();
    METRALE_CU(cuStreamCreate, &stream_, CU_STREAM_NON_BLOCKING);
  }
  ~OwnedStream() { driver::api().cuStreamDestroy(stream_); }
  OwnedStream(const OwnedStream&) = delete;
  OwnedStream& operator=(const OwnedStream&) = delete;
  CUstream get() const { return stream_; }
  StreamHandle handle() const { return reinterpret_cast<StreamHandle>(stream_); }
  void synchronize() const { METRALE_CU(cuStreamSynchronize, stream_); }

 private:
  CUstream stream_ = nullptr;
};

}  // namespace metrale::test
