// The scalar reference kernels agree with the CPU emulation bit for bit, on every output
// of the smaller shapes and on sampled columns of the large ones.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <vector>

#include "gpu/gpu_fixture.hpp"
#include "metrale/host_reference.hpp"
#include "metrale/w8a16_gemv_batch16.hpp"

using namespace metrale;
using namespace metrale::test;

namespace {

template <typename T>
std::vector<T> download(const DeviceBuffer& b) {
  std::vector<T> v(b.size() / sizeof(T));
  gpu().backend.download(v.data(), b.get(), b.size());
  return v;
}

}  // namespace

TEST_CASE("gpu: w8a16_gemv_batch16(_strided) == CPU emulation, bit for bit") {
  struct Shape {
    std::uint32_t n, k;
  };
  const Shape shapes[] = {{1, 128}, {31, 256}, {33, 1024}, {576, 7168}, {4128, 1024},
                          {4096, 7168}, {36864, 256}, {7168, 18432}};
  const std::uint32_t ms[] = {1, 5, 8, 9, 16};
  std::uint64_t compared = 0;
  std::uint32_t seed = 1000;
  for (const Shape& s : shapes) {
    for (std::uint32_t m : ms) {
      for (bool strided : {false, true}) {
        CAPTURE(s.n);
        CAPTURE(s.k);
        CAPTURE(m);
        CAPTURE(strided);
        const std::uint32_t a_stride = strided ? s.k + 24 : s.k;
        const std::uint32_t c_stride = strided ? s.n + 3 : s.n;
        Problem p(m, s.n, s.k, a_stride, c_stride, ++seed);
        if (strided) {
          p.run_reference();
        } else {
          w8a16_gemv_batch16(gpu().backend, gpu().cache.kernel("w8a16_gemv_batch16"),
                             p.input.get(), p.weight.get(), p.scale.get(), p.ref.get(), m, s.n,
                             s.k, 0);
        }
        const auto got = p.download_ref();
        const auto x = download<std::uint16_t>(p.input);
        const auto w = download<std::uint8_t>(p.weight);
        const auto sc = download<float>(p.scale);
        const GemvOperands op{x.data(), w.data(), sc.data(), m, s.n, s.k, a_stride};
        // Every column while the CPU work stays small, else 97 spread columns.
        const bool all = std::uint64_t{s.n} * s.k * m <= 64ull << 20;
        const std::uint32_t step = all ? 1 : std::max<std::uint32_t>(1, s.n / 97);
        std::uint64_t mismatches = 0;
        for (std::uint32_t i = 0; i < m; ++i) {
          for (std::uint32_t j = 0; j < s.n; j += step) {
            const std::uint16_t want = cpu_w8a16_gemv(op, i, j);
            const std::uint16_t have = got[std::size_t{i} * c_stride + j];
            if (want != have && mismatches++ == 0) {
              FAIL_CHECK(fmt::format("row {} col {}: GPU 0x{:04x} CPU 0x{:04x}", i, j, have, want));
            }
            ++compared;
          }
        }
        CHECK(mismatches == 0);
      }
    }
  }
  MESSAGE("scalar GPU vs CPU emulation: ", compared, " outputs compared bit for bit");
}
