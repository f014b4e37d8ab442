#include "metrale/kernel_service.hpp"

namespace metrale {

KernelService::KernelService(int device_ordinal)
    : backend_(std::make_unique<CudaBackend>(device_ordinal)),
      cache_(std::make_unique<ModuleCache>(*backend_)),
      levers_(target_levers(backend_->target())) {}

}  // namespace metrale
