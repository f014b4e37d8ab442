// KernelLaunch packs arguments in call order with their exact sizes and hands grid,
// block and stream to the backend unchanged.
#include <doctest/doctest.h>

#include <optional>

#include "metrale/error.hpp"
#include "metrale/kernel_launch.hpp"
#include "support/fake_backend.hpp"

using namespace metrale;

TEST_CASE("div_ceil rounds up") {
  CHECK(div_ceil(1, 32) == 1);
  CHECK(div_ceil(32, 32) == 1);
  CHECK(div_ceil(33, 32) == 2);
  CHECK(div_ceil(36864, 64) == 576);
  CHECK(div_ceil(0xFFFFFFFFu, 32) == 0x8000000u);
  CHECK(div_ceil(0xFFFFFFFFu, 16) == 0x10000000u);
}

TEST_CASE("KernelLaunch packs pointers as 8 bytes and u32 as 4, in order") {
  test::RecordingBackend gpu;
  KernelHandle k{reinterpret_cast<void*>(0x10), gpu.context(), "probe"};
  KernelLaunch(gpu, k)
      .grid({7, 2, 1})
      .block({128, 1, 1})
      .arg_ptr(DevicePtr(0x1111222233334444ull))
      .arg_u32(5)
      .arg_ptr(DevicePtr(0xAAAA))
      .arg_u32(0xFFFFFFFFu)
      .arg_f32(1.5f)
      .launch(99);
  const auto launches = gpu.launches();
  REQUIRE(launches.size() == 1);
  const test::RecordedLaunch& l = launches[0];
  CHECK(l.kernel == "probe");
  CHECK(l.stream == 99);
  CHECK(l.config.grid.x == 7);
  CHECK(l.config.grid.y == 2);
  CHECK(l.config.block.x == 128);
  REQUIRE(l.args.size() == 5);
  CHECK(l.args[0].size() == 8);
  CHECK(l.u64_arg(0) == 0x1111222233334444ull);
  CHECK(l.u32_arg(1) == 5);
  CHECK(l.u64_arg(2) == 0xAAAA);
  CHECK(l.u32_arg(3) == 0xFFFFFFFFu);
  CHECK(l.args[4].size() == 4);
}

TEST_CASE("KernelLaunch refuses more arguments than it can hold") {
  test::RecordingBackend gpu;
  KernelHandle k{reinterpret_cast<void*>(0x10), gpu.context(), "probe"};
  KernelLaunch launch(gpu, k);
  for (std::size_t i = 0; i < KernelLaunch::kMaxArgs; ++i) launch.arg_u32(1);
  CHECK_THROWS_AS(launch.arg_u32(1), Error);
  CHECK(gpu.launches().empty());
}

TEST_CASE("A copied KernelLaunch launches its own argument values") {
  test::RecordingBackend gpu;
  KernelHandle k{reinterpret_cast<void*>(0x10), gpu.context(), "probe"};
  const std::uint64_t external = 0x5555;
  std::optional<KernelLaunch> original(std::in_place, gpu, k);
  original->arg_ptr(DevicePtr(0x1234)).arg_u32(7).arg_bytes(&external, sizeof(external));
  KernelLaunch copy = *original;
  // The copy's values must not point into the original: a new builder in the original's
  // place holds other values there, which a stale pointer would read.
  original.emplace(gpu, k);
  original->arg_ptr(DevicePtr(0xDEAD)).arg_u32(0xBAD);
  copy.launch(0);
  const auto launches = gpu.launches();
  REQUIRE(launches.size() == 1);
  REQUIRE(launches[0].args.size() == 3);
  CHECK(launches[0].u64_arg(0) == 0x1234);
  CHECK(launches[0].u32_arg(1) == 7);
  CHECK(launches[0].u64_arg(2) == 0x5555);
}
