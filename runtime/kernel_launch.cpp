#include "metrale/kernel_launch.hpp"

#include <array>
#include <cstring>

#include "metrale/error.hpp"

namespace metrale {

std::size_t KernelLaunch::next_slot() const {
  if (count_ == kMaxArgs) fail("KernelLaunch of {}: more than {} arguments",
                               kernel_.name != nullptr ? kernel_.name : "?", kMaxArgs);
  return count_;
}

KernelLaunch& KernelLaunch::push(const void* value, std::size_t size) {
  const std::size_t i = next_slot();
  std::memcpy(&storage_[i], value, size);
  sizes_[i] = size;
  ++count_;
  return *this;
}

KernelLaunch& KernelLaunch::arg_ptr(DevicePtr p) { return push(&p.address, sizeof(p.address)); }

KernelLaunch& KernelLaunch::arg_u32(std::uint32_t v) { return push(&v, sizeof(v)); }

KernelLaunch& KernelLaunch::arg_f32(float v) { return push(&v, sizeof(v)); }

KernelLaunch& KernelLaunch::arg_bytes(const void* value, std::size_t size) {
  const std::size_t i = next_slot();
  external_[i] = value;
  sizes_[i] = size;
  ++count_;
  return *this;
}

TensorMapBytes packed_tensor_map_request(const TensorMap2dRequest& r) {
  TensorMapBytes out;
  out.opaque[0] = r.base.address;
  out.opaque[1] = r.element_bytes;
  out.opaque[2] = r.cols;
  out.opaque[3] = r.rows;
  out.opaque[4] = r.row_pitch;
  out.opaque[5] = r.box_cols;
  out.opaque[6] = r.box_rows;
  return out;
}

void KernelLaunch::launch(StreamHandle stream) {
  std::array<KernelArg, kMaxArgs> args{};
  for (std::size_t i = 0; i < count_; ++i) {
    args[i] = KernelArg{external_[i] != nullptr ? external_[i] : &storage_[i], sizes_[i]};
  }
  gpu_.launch(kernel_, config_, std::span<const KernelArg>(args.data(), count_), stream);
}

}  // namespace metrale
