// The device FP8 decodes over all 256 codes against the host's (which is checked against
// the format's definition in test_numerics.cpp), and NaN weights turning their output
// column NaN end to end, as in the reference.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <vector>

#include "gpu/gpu_fixture.hpp"
#include "metrale/host_reference.hpp"
#include "metrale/kernel_launch.hpp"

using namespace metrale;
using namespace metrale::test;

namespace {

// Decodes every code with both device paths: the tensor-core kernels' integer decode
// (four codes a word) and the reference kernels' exact decode (two codes at a time).
constexpr const char* kDecodeProbe = R"(
#include "metrale_device.cuh"
extern "C" __global__ void decode_all(u32* fast, u32* nan_bits, u32* exact) {
  const u32 i = threadIdx.x;  // word i holds codes 4i .. 4i+3
  const u32 w = (4 * i) | ((4 * i + 1) << 8) | ((4 * i + 2) << 16) | ((4 * i + 3) << 24);
  fp8x4_e4m3_to_bf16x2_fast(w, fast[2 * i], fast[2 * i + 1]);
  nan_bits[i] = fp8x4_nan_bits(w);
  exact[2 * i] = fp8x2_e4m3_to_bf16x2(w & 0xFFFFu);
  exact[2 * i + 1] = fp8x2_e4m3_to_bf16x2(w >> 16);
}
// Word i: byte j is codes[nibble j of i], 16 codes around the NaN codes and the carries.
extern "C" __global__ void nan_flags_all(const u32* codes, u32* flags) {
  const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
  u32 w = 0;
  for (u32 j = 0; j < 4; ++j) w |= codes[(i >> (4 * j)) & 15u] << (8 * j);
  flags[i] = fp8x4_nan_flags(w) & 0x80808080u;
}
)";

// Codes next to the NaN codes 0x7F and 0xFF, the carry's other sources and plain values.
constexpr std::uint32_t kEdgeCodes[16] = {0x00, 0x01, 0x3F, 0x40, 0x70, 0x7D, 0x7E, 0x7F,
                                          0x80, 0x81, 0xBF, 0xC0, 0xF0, 0xFD, 0xFE, 0xFF};

}  // namespace

TEST_CASE("gpu: both device FP8 decodes agree with the host on all 256 codes") {
  CudaBackend& b = gpu().backend;
  auto module = load_test_kernels("decode_probe", kDecodeProbe);
  const KernelHandle k{module->function("decode_all"), b.context(), "decode_all"};
  DeviceBuffer fast(b, 128 * 4), nan_bits(b, 64 * 4), exact(b, 128 * 4);
  // Poisoned: zeroed memory would already read as "no NaN flag" and as code 0's decode.
  b.fill_bytes(fast.get(), 0x5A, 512);
  b.fill_bytes(nan_bits.get(), 0x5A, 256);
  b.fill_bytes(exact.get(), 0x5A, 512);
  KernelLaunch(b, k).grid({1, 1, 1}).block({64, 1, 1})
      .arg_ptr(fast.get()).arg_ptr(nan_bits.get()).arg_ptr(exact.get()).launch(0);
  std::vector<std::uint32_t> f(128), nb(64), ex(128);
  b.download(f.data(), fast.get(), 512);
  b.download(nb.data(), nan_bits.get(), 256);
  b.download(ex.data(), exact.get(), 512);
  for (unsigned code = 0; code < 256; ++code) {
    CAPTURE(code);
    const std::uint16_t want = fp8_e4m3_to_bf16_bits(static_cast<std::uint8_t>(code));
    const auto lane = [&](const std::vector<std::uint32_t>& v) {
      return static_cast<std::uint16_t>(v[code / 2] >> (16 * (code % 2)));
    };
    const bool nan_code = (code & 0x7F) == 0x7F;
    const bool flagged = ((nb[code / 4] >> (8 * (code % 4))) & 0x80u) != 0;
    CHECK(flagged == nan_code);
    if (nan_code) {
      CHECK(std::isnan(bf16_to_float(lane(ex))));
      CHECK(lane(f) == ((code & 0x80) != 0 ? 0xC3F0 : 0x43F0));  // +-480, flagged above
    } else {
      CHECK(lane(ex) == want);
      CHECK(lane(f) == want);
    }
  }
}

TEST_CASE("gpu: fp8x4_nan_flags says whether a word holds a NaN code, for every word of edge codes") {
  CudaBackend& b = gpu().backend;
  auto module = load_test_kernels("decode_probe", kDecodeProbe);
  const KernelHandle k{module->function("nan_flags_all"), b.context(), "nan_flags_all"};
  constexpr std::uint32_t kWords = 1u << 16;
  DeviceBuffer codes(b, sizeof(kEdgeCodes)), flags(b, kWords * 4);
  b.upload(codes.get(), kEdgeCodes, sizeof(kEdgeCodes));
  b.fill_bytes(flags.get(), 0x5A, kWords * 4);  // poisoned: every word is written
  KernelLaunch(b, k).grid({kWords / 256, 1, 1}).block({256, 1, 1})
      .arg_ptr(codes.get()).arg_ptr(flags.get()).launch(0);
  std::vector<std::uint32_t> got(kWords);
  b.download(got.data(), flags.get(), kWords * 4);
  std::uint32_t with_nan = 0, wrong = 0;
  for (std::uint32_t i = 0; i < kWords; ++i) {
    bool nan = false;
    for (std::uint32_t j = 0; j < 4; ++j) nan |= (kEdgeCodes[(i >> (4 * j)) & 15u] & 0x7F) == 0x7F;
    with_nan += nan ? 1 : 0;
    wrong += (got[i] != 0) != nan ? 1 : 0;
  }
  CHECK(with_nan == kWords - 14u * 14u * 14u * 14u);
  CHECK(wrong == 0);
}

TEST_CASE("gpu: a NaN weight makes its output column NaN, in every entry and the reference") {
  // Columns in either half of a 16-row group, in different 32-row words of a 128-row tile
  // and in the last, partial tile, with both NaN codes at the first, the last and middle K;
  // m = 3 and 9, so that the kernels built twice run both builds.
  const std::uint32_t n = 4096 + 32, k = 7168;
  const std::uint32_t nan_cols[] = {0, 45, 1234, n - 1};
  const std::uint32_t nan_ks[] = {3001, 0, 128 * 17 + 5, k - 1};
  for (const TcEntry& entry : tc_entries()) {
    for (const std::uint32_t m : {3u, 9u}) {
      CAPTURE(entry.name);
      CAPTURE(m);
      Problem p(m, n, k, entry.strided ? k + 8 : k, entry.strided ? n + 3 : n, 4242);
      for (std::size_t c = 0; c < std::size(nan_cols); ++c) {
        const std::uint8_t nan_code = c % 2 == 0 ? 0xFF : 0x7F;
        gpu().backend.upload(p.weight.get() + std::uint64_t{nan_cols[c]} * k + nan_ks[c],
                             &nan_code, 1);
      }
      entry.launch(p, 0);
      p.run_reference();
      const auto got = p.download_out();
      const auto ref = p.download_ref();
      std::uint64_t nan_ok = 0, finite_ok = 0;
      for (std::uint32_t i = 0; i < p.m; ++i) {
        for (std::uint32_t j = 0; j < n; ++j) {
          const std::size_t e = std::size_t{i} * p.c_row_stride + j;
          const float g = bf16_to_float(got[e]);
          const float r = bf16_to_float(ref[e]);
          if (std::find(std::begin(nan_cols), std::end(nan_cols), j) != std::end(nan_cols)) {
            nan_ok += std::isnan(g) && std::isnan(r);
          } else {
            finite_ok += std::isfinite(g) && std::isfinite(r);
          }
        }
      }
      CHECK(nan_ok == std::uint64_t{p.m} * std::size(nan_cols));
      CHECK(finite_ok == std::uint64_t{p.m} * (n - std::size(nan_cols)));
    }
  }
}
