// The launchers keep the seed's contract: argument order, grid and block, the guards in
// the seed's order with its messages, and nothing launched when a guard fails.
#include <doctest/doctest.h>

#include <cstring>
#include <functional>

#include <fmt/format.h>

#include <string>
#include <string_view>

#include "metrale/error.hpp"
#include "metrale/m16_plan.hpp"
#include "metrale/w8a16_gemm_m16.hpp"
#include "metrale/w8a16_gemm_m16_skinny.hpp"
#include "metrale/w8a16_gemm_m16_splitk.hpp"
#include "metrale/w8a16_gemm_m16_stream.hpp"
#include "metrale/w8a16_gemm_m16_streamk.hpp"
#include "metrale/w8a16_gemv_batch16.hpp"
#include "support/launcher_fixture.hpp"

using namespace metrale;

namespace {

using test::kIn, test::kW, test::kS, test::kOut, test::kWs;

using Fixture = test::LauncherFixture;
using test::error_of;

// The guards every split launcher shares, through `launch(m, k, split)` on N = 576 with
// contiguous rows: the split's range, its K bound, and m.
using SplitLaunch = std::function<void(std::uint32_t m, std::uint32_t k, std::uint32_t split)>;
void check_split_guards(std::string_view fn, const SplitLaunch& launch) {
  const std::string name(fn);
  CHECK(error_of([&] { launch(4, 7168, 9); }) ==
        name + ": split=9 outside 1..=8 (portable cluster size)");
  CHECK(error_of([&] { launch(4, 7168, 0); }) ==
        name + ": split=0 outside 1..=8 (portable cluster size)");
  CHECK(error_of([&] { launch(4, 256, 4); }) ==
        name + ": split=4 exceeds the K/128=2 blocks to share");
  CHECK(error_of([&] { launch(17, 256, 1); }) == name + ": m=17 outside 1..=16 (kernel M tile)");
}

}  // namespace

TEST_CASE("ContiguousM16Gemm holds both contiguous launchers") {
  ContiguousM16Gemm a = &w8a16_gemm_m16;
  ContiguousM16Gemm b = &w8a16_gemm_m16_n64;
  CHECK((a != b));
  CHECK(W8A16_GEMM_M16_N_TILE == 32);
  CHECK(W8A16_GEMM_M16_N_TILE_WIDE == 64);
}

TEST_CASE("contiguous launchers: grid ceil(N/N_TILE), block 128, seed argument order") {
  // The 32-wide tile runs the strided kernel: the seed's seven arguments, then the
  // contiguous pitches k and n.
  Fixture f;
  w8a16_gemm_m16(f.gpu, f.cache.kernel("w8a16_gemm_m16"), kIn, kW, kS, kOut, 16, 4096 + 32,
                 7168, 7);
  w8a16_gemm_m16_n64(f.gpu, f.cache.kernel("w8a16_gemm_m16_n64"), kIn, kW, kS, kOut, 1, 33,
                     128, 0);
  const auto l = f.gpu.launches();
  REQUIRE(l.size() == 2);
  CHECK(l[0].kernel == "w8a16_gemm_m16");
  CHECK(l[0].config.grid.x == 129);
  CHECK(l[0].config.grid.y == 1);
  CHECK(l[0].config.block.x == 128);
  REQUIRE(l[0].args.size() == 9);
  CHECK(l[0].u64_arg(0) == kIn.address);
  CHECK(l[0].u64_arg(1) == kW.address);
  CHECK(l[0].u64_arg(2) == kS.address);
  CHECK(l[0].u64_arg(3) == kOut.address);
  CHECK(l[0].u32_arg(4) == 16);
  CHECK(l[0].u32_arg(5) == 4096 + 32);
  CHECK(l[0].u32_arg(6) == 7168);
  CHECK(l[0].u32_arg(7) == 7168);
  CHECK(l[0].u32_arg(8) == 4096 + 32);
  CHECK(l[0].stream == 7);
  CHECK(l[1].kernel == "w8a16_gemm_m16_n64");
  CHECK(l[1].config.grid.x == 1);
  REQUIRE(l[1].args.size() == 7);
  CHECK(l[1].u32_arg(6) == 128);
}

TEST_CASE("strided launcher passes both pitches after k") {
  Fixture f;
  w8a16_gemm_m16_strided(f.gpu, f.cache.kernel("w8a16_gemm_m16_strided"), kIn, kW, kS, kOut,
                         3, 576, 7168, 7168 + 64, 3072, 0);
  const auto l = f.gpu.launches();
  REQUIRE(l.size() == 1);
  CHECK(l[0].config.grid.x == 18);
  REQUIRE(l[0].args.size() == 9);
  CHECK(l[0].u32_arg(7) == 7168 + 64);
  CHECK(l[0].u32_arg(8) == 3072);
}

TEST_CASE("both GEMV entries launch the strided kernel: contiguous pitches are k and n") {
  Fixture f;
  w8a16_gemv_batch16(f.gpu, f.cache.kernel("w8a16_gemv_batch16"), kIn, kW, kS, kOut, 3, 300,
                     256, 0);
  w8a16_gemv_batch16_strided(f.gpu, f.cache.kernel("w8a16_gemv_batch16_strided"), kIn, kW, kS,
                             kOut, 3, 300, 256, 264, 320, 0);
  const auto l = f.gpu.launches();
  REQUIRE(l.size() == 2);
  for (const auto& launch : l) {
    CHECK(launch.config.grid.x == 3);
    CHECK(launch.config.block.x == 128);
    REQUIRE(launch.args.size() == 9);
    CHECK(launch.u32_arg(4) == 3);
    CHECK(launch.u32_arg(5) == 300);
    CHECK(launch.u32_arg(6) == 256);
  }
  CHECK(l[0].u32_arg(7) == 256);
  CHECK(l[0].u32_arg(8) == 300);
  CHECK(l[1].u32_arg(7) == 264);
  CHECK(l[1].u32_arg(8) == 320);
}

TEST_CASE("guards: the seed's messages, in the seed's order, and nothing launched") {
  Fixture f;
  const KernelHandle k = f.cache.kernel("w8a16_gemm_m16");
  const KernelHandle ks = f.cache.kernel("w8a16_gemm_m16_strided");
  CHECK(error_of([&] { w8a16_gemm_m16(f.gpu, k, kIn, kW, kS, kOut, 0, 64, 128, 0); }) ==
        "w8a16_gemm_m16: m=0 outside 1..=16 (kernel M tile)");
  CHECK(error_of([&] { w8a16_gemm_m16_n64(f.gpu, k, kIn, kW, kS, kOut, 17, 64, 128, 0); }) ==
        "w8a16_gemm_m16_n64: m=17 outside 1..=16 (kernel M tile)");
  CHECK(error_of([&] { w8a16_gemm_m16(f.gpu, k, kIn, kW, kS, kOut, 4, 64, 100, 0); }) ==
        "w8a16_gemm_m16: K=100 not a multiple of 128 (block-scale granularity)");
  // m is checked before K.
  CHECK(error_of([&] { w8a16_gemm_m16(f.gpu, k, kIn, kW, kS, kOut, 0, 64, 100, 0); })
            .find("m=0") != std::string::npos);
  CHECK(error_of([&] {
          w8a16_gemm_m16_strided(f.gpu, ks, kIn, kW, kS, kOut, 2, 64, 256, 128, 64, 0);
        }) == "w8a16_gemm_m16_strided: row pitches (a=128, c=64) must cover the used extents "
              "(k=256, n=64)");
  CHECK(error_of([&] {
          w8a16_gemm_m16_strided(f.gpu, ks, kIn, kW, kS, kOut, 2, 64, 256, 260, 64, 0);
        }) == "w8a16_gemm_m16_strided: a_row_stride=260 must keep rows 16B-aligned (cp.async "
              "stages A in 16-byte chunks)");
  // Added guards: n == 0, null and misaligned pointers.
  CHECK(error_of([&] { w8a16_gemm_m16(f.gpu, k, kIn, kW, kS, kOut, 1, 0, 128, 0); }) ==
        "w8a16_gemm_m16: n=0: nothing to compute (N must be at least 1)");
  CHECK(error_of([&] {
          w8a16_gemm_m16(f.gpu, k, DevicePtr(0x10000000008), kW, kS, kOut, 1, 32, 128, 0);
        }) == "w8a16_gemm_m16: input=0x10000000008 is not 16-byte aligned");
  CHECK(error_of([&] {
          w8a16_gemm_m16(f.gpu, k, kIn, DevicePtr(0x20000000004), kS, kOut, 1, 32, 128, 0);
        }) == "w8a16_gemm_m16: weight=0x20000000004 is not 16-byte aligned");
  CHECK(error_of([&] {
          w8a16_gemm_m16(f.gpu, k, kIn, kW, DevicePtr(0x30000000002), kOut, 1, 32, 128, 0);
        }) == "w8a16_gemm_m16: block_scale=0x30000000002 is not 4-byte aligned");
  CHECK(error_of([&] {
          w8a16_gemm_m16(f.gpu, k, kIn, kW, kS, DevicePtr(0x40000000001), 1, 32, 128, 0);
        }) == "w8a16_gemm_m16: output=0x40000000001 is not 2-byte aligned");
  CHECK(error_of([&] {
          w8a16_gemm_m16(f.gpu, k, kIn, DevicePtr(0), kS, kOut, 1, 32, 128, 0);
        }) == "w8a16_gemm_m16: weight is a null device pointer");
  CHECK(error_of([&] {
          w8a16_gemv_batch16(f.gpu, k, kIn, kW, kS, kOut, 17, 32, 128, 0);
        }) == "w8a16_gemv_batch16: m=17 outside 1..=16 (kernel M tile)");
  // The strided entry: m, then K, then the pitches, each with every later one bad too.
  CHECK(error_of([&] {
          w8a16_gemm_m16_strided(f.gpu, ks, kIn, kW, kS, kOut, 0, 64, 100, 64, 32, 0);
        }) == "w8a16_gemm_m16_strided: m=0 outside 1..=16 (kernel M tile)");
  CHECK(error_of([&] {
          w8a16_gemm_m16_strided(f.gpu, ks, kIn, kW, kS, kOut, 2, 64, 100, 64, 32, 0);
        }) == "w8a16_gemm_m16_strided: K=100 not a multiple of 128 (block-scale granularity)");
  CHECK(error_of([&] {
          w8a16_gemm_m16_strided(f.gpu, ks, kIn, kW, kS, DevicePtr(0), 2, 64, 256, 128, 64, 0);
        }).starts_with("w8a16_gemm_m16_strided: row pitches (a=128, c=64)"));
  CHECK(f.gpu.launches().empty());
}

TEST_CASE("guards: an output that overlaps what the kernel reads is refused") {
  Fixture f;
  const KernelHandle ks = f.cache.kernel("w8a16_gemm_m16_strided");
  const std::uint32_t m = 4, n = 256, k = 512, a_pitch = 1024, c_pitch = 512;
  // The last byte each operand spans, and the first past it.
  const std::uint64_t in_end = kIn.address + (std::uint64_t{m - 1} * a_pitch + k) * 2;
  const std::uint64_t w_end = kW.address + std::uint64_t{n} * k;
  const std::uint64_t s_end = kS.address + std::uint64_t{(n + 127) / 128} * (k / 128) * 4;
  const auto run = [&](DevicePtr output) {
    return error_of([&] {
      w8a16_gemm_m16_strided(f.gpu, ks, kIn, kW, kS, output, m, n, k, a_pitch, c_pitch, 0);
    });
  };
  CHECK(run(DevicePtr(in_end - 2)) ==
        fmt::format("w8a16_gemm_m16_strided: output [0x{:x}, 0x{:x}) overlaps input [0x{:x}, "
                    "0x{:x}): the kernel would read bytes it has already written",
                    in_end - 2, in_end - 2 + (std::uint64_t{m - 1} * c_pitch + n) * 2,
                    kIn.address, in_end));
  CHECK(run(kW).find("overlaps weight") != std::string::npos);
  CHECK(run(DevicePtr(w_end - 512)).find("overlaps weight") != std::string::npos);
  CHECK(run(DevicePtr(s_end - 2)).find("overlaps block_scale") != std::string::npos);
  // An output that starts before the input and runs into it.
  CHECK(run(DevicePtr(kIn.address - 16)).find("overlaps input") != std::string::npos);
  CHECK(f.gpu.launches().empty());
  // Rows interleaved at wider pitches, apart byte for byte, are taken: tokens in the even
  // slots of a buffer of row pairs, outputs in the odd ones; and so is K = 0, which reads
  // no input.
  const std::uint64_t pair = (std::uint64_t{k} + n) * 2;
  w8a16_gemm_m16_strided(f.gpu, ks, kIn, kW, kS, DevicePtr(kIn.address + std::uint64_t{k} * 2),
                         m, n, k, static_cast<std::uint32_t>(pair / 2),
                         static_cast<std::uint32_t>(pair / 2), 0);
  w8a16_gemm_m16_strided(f.gpu, ks, kIn, kW, kS, kIn, m, n, 0, a_pitch, c_pitch, 0);
  CHECK(f.gpu.launches().size() == 2);
  // One byte of an output row in an input row is not.
  CHECK(error_of([&] {
          w8a16_gemm_m16_strided(f.gpu, ks, kIn, kW, kS,
                                 DevicePtr(kIn.address + std::uint64_t{k} * 2 - 2), m, n, k,
                                 static_cast<std::uint32_t>(pair / 2),
                                 static_cast<std::uint32_t>(pair / 2), 0);
        }).find("overlaps input") != std::string::npos);
  // Right after each operand, the output is taken; the inputs may overlap each other.
  for (const std::uint64_t out : {in_end, w_end, s_end}) CHECK(run(DevicePtr(out)) == "<no error>");
  w8a16_gemm_m16_strided(f.gpu, ks, kIn, kIn, kIn, kOut, m, n, k, a_pitch, c_pitch, 0);
  CHECK(f.gpu.launches().size() == 6);
  // The contiguous entries count the rows at the pitches k and n.
  const KernelHandle kc = f.cache.kernel("w8a16_gemm_m16");
  CHECK(error_of([&] {
          w8a16_gemm_m16(f.gpu, kc, kIn, kW, kS,
                         DevicePtr(kIn.address + std::uint64_t{m - 1} * k * 2), m, n, k, 0);
        }).find("overlaps input") != std::string::npos);
  CHECK(error_of([&] {
          w8a16_gemv_batch16(f.gpu, f.cache.kernel("w8a16_gemv_batch16"), kIn, kW, kS, kW, m, n,
                             k, 0);
        }).find("overlaps weight") != std::string::npos);
  // An operand whose bytes would run past the end of the address space.
  CHECK(run(DevicePtr(~std::uint64_t{0} - 255)).find("past the end of the address space") !=
        std::string::npos);
  CHECK(f.gpu.launches().size() == 6);
}

TEST_CASE("launchers refuse another kernel's handle; a handle without a name is taken") {
  Fixture f;
  const KernelHandle narrow = f.cache.kernel("w8a16_gemm_m16");
  const KernelHandle wide = f.cache.kernel("w8a16_gemm_m16_n64");
  const KernelHandle stream = f.cache.kernel("w8a16_gemm_m16_stream");
  const KernelHandle streamk = f.cache.kernel("w8a16_gemm_m16_streamk");
  const std::string strided_entries =
      "w8a16_gemm_m16, w8a16_gemm_m16_strided or w8a16_gemm_m16_splitk";
  // The 64-wide kernel takes 7 arguments on a grid of 64-row tiles, the strided one 9 on
  // 32-row tiles: either handle in the other's launcher would read past its arguments or
  // leave rows unwritten.
  CHECK(error_of([&] {
          w8a16_gemm_m16_n64(f.gpu, narrow, kIn, kW, kS, kOut, 4, 4096, 4096, 0);
        }) == "w8a16_gemm_m16_n64: the handle is of 'w8a16_gemm_m16', not of w8a16_gemm_m16_n64");
  CHECK(error_of([&] { w8a16_gemm_m16(f.gpu, wide, kIn, kW, kS, kOut, 4, 4096, 4096, 0); }) ==
        "w8a16_gemm_m16: the handle is of 'w8a16_gemm_m16_n64', not of " + strided_entries);
  CHECK(error_of([&] {
          w8a16_gemm_m16_strided(f.gpu, streamk, kIn, kW, kS, kOut, 4, 4096, 4096, 4096, 4096,
                                 0);
        }) == "w8a16_gemm_m16_strided: the handle is of 'w8a16_gemm_m16_streamk', not of " +
                  strided_entries);
  CHECK(error_of([&] {
          w8a16_gemm_m16_splitk(f.gpu, wide, kIn, kW, kS, kOut, 4, 4096, 4096, 4096, 4096, 2,
                                0);
        }) == "w8a16_gemm_m16_splitk: the handle is of 'w8a16_gemm_m16_n64', not of " +
                  strided_entries);
  CHECK(error_of([&] {
          w8a16_gemm_m16_stream(f.gpu, streamk, kIn, kW, kS, kOut, 4, 576, 7168, 7168, 576, 2,
                                0);
        }) == "w8a16_gemm_m16_stream: the handle is of 'w8a16_gemm_m16_streamk', not of "
              "w8a16_gemm_m16_stream");
  CHECK(error_of([&] {
          w8a16_gemm_m16_streamk(f.gpu, stream, kIn, kW, kS, kOut, 4, 576, 7168, 7168, 576,
                                 {kWs, w8a16_gemm_m16_streamk_workspace_bytes(576, 8)}, 8, 0);
        }) == "w8a16_gemm_m16_streamk: the handle is of 'w8a16_gemm_m16_stream', not of "
              "w8a16_gemm_m16_streamk");
  // The GEMV entries' handle runs one kernel; the tensor-core kernel's is refused.
  CHECK(error_of([&] { w8a16_gemv_batch16(f.gpu, narrow, kIn, kW, kS, kOut, 4, 4096, 4096, 0); })
        == "w8a16_gemv_batch16: the handle is of 'w8a16_gemm_m16', not of w8a16_gemv_batch16 or "
           "w8a16_gemv_batch16_strided");
  CHECK(error_of([&] {
          w8a16_gemv_batch16_strided(f.gpu, wide, kIn, kW, kS, kOut, 4, 4096, 4096, 4096, 4096,
                                     0);
        }).find("the handle is of 'w8a16_gemm_m16_n64'") != std::string::npos);
  CHECK(f.gpu.launches().empty());
  // The strided kernel's entries share one handle; a handle the caller made has no name.
  w8a16_gemm_m16(f.gpu, f.cache.kernel("w8a16_gemm_m16_splitk"), kIn, kW, kS, kOut, 4, 4096,
                 4096, 0);
  KernelHandle unnamed = wide;
  unnamed.name = nullptr;
  w8a16_gemm_m16_n64(f.gpu, unnamed, kIn, kW, kS, kOut, 4, 4096, 4096, 0);
  CHECK(f.gpu.launches().size() == 2);
}

TEST_CASE("a handle from another context is refused by the CUDA backend path") {
  // The recorder does not check contexts; the module cache stamps handles with the
  // backend's context so CudaBackend::launch can.
  Fixture f;
  CHECK(f.cache.kernel("w8a16_gemm_m16").context == f.gpu.context_id);
}

TEST_CASE("split-K launcher: grid (tiles, split), cluster (1, split), guards") {
  Fixture f;
  const KernelHandle k = f.cache.kernel("w8a16_gemm_m16_splitk");
  w8a16_gemm_m16_splitk(f.gpu, k, kIn, kW, kS, kOut, 4, 576, 7168, 7168, 576, 8, 0);
  w8a16_gemm_m16_splitk(f.gpu, k, kIn, kW, kS, kOut, 4, 576, 7168, 7168, 576, 1, 0);
  const auto l = f.gpu.launches();
  REQUIRE(l.size() == 2);
  CHECK(l[0].config.grid.x == 18);
  CHECK(l[0].config.grid.y == 8);
  CHECK(l[0].config.cluster.x == 1);
  CHECK(l[0].config.cluster.y == 8);
  REQUIRE(l[0].args.size() == 9);
  CHECK(l[0].u32_arg(7) == 7168);
  CHECK(l[0].u32_arg(8) == 576);
  CHECK(l[1].config.grid.y == 1);
  CHECK(l[1].config.cluster.x == 0);  // a split of one launches without a cluster
  check_split_guards("w8a16_gemm_m16_splitk", [&](std::uint32_t m, std::uint32_t kk,
                                                   std::uint32_t split) {
    w8a16_gemm_m16_splitk(f.gpu, k, kIn, kW, kS, kOut, m, 576, kk, kk, 576, split, 0);
  });
  CHECK(f.gpu.launches().size() == 2);
}

TEST_CASE("stream launcher: grid (tiles, split), cluster (1, split), ring, tensor maps, guards") {
  Fixture f;
  const KernelHandle k = f.cache.kernel("w8a16_gemm_m16_stream");
  w8a16_gemm_m16_stream(f.gpu, k, kIn, kW, kS, kOut, 4, 576, 7168, 7168, 576, 8, 0);
  w8a16_gemm_m16_stream(f.gpu, k, kIn, kW, kS, kOut, 16, 28672, 4096, 4104, 28672, 1, 0,
                        M16LaunchOptions{true});
  w8a16_gemm_m16_stream(f.gpu, k, kIn, kW, kS, kOut, 1, 1536, 4096, 4096, 1536, 2, 0, {},
                        StreamTuning{128, 7});
  const auto l = f.gpu.launches();
  REQUIRE(l.size() == 3);
  // N = 576: 32-row tiles, 4 K blocks per stage; 4 stages of 16384 + 4*4*256 bytes.
  CHECK(l[0].config.grid.x == 18);
  CHECK(l[0].config.grid.y == 8);
  CHECK(l[0].config.block.x == 256);
  CHECK(l[0].config.cluster.x == 1);
  CHECK(l[0].config.cluster.y == 8);
  CHECK_FALSE(l[0].config.programmatic_dependent);
  CHECK(l[0].config.shared_bytes == 128 + 4 * (16384 + 4 * 4 * 256));
  REQUIRE(l[0].args.size() == 13);
  CHECK(l[0].u32_arg(7) == 7168);
  CHECK(l[0].u32_arg(8) == 576);
  CHECK(l[0].u32_arg(9) == 32);
  CHECK(l[0].u32_arg(10) == 0);  // no weight stage ahead of the wait without PDL
  // The tensor maps (as the recording backend packs them): weights N rows of K bytes in
  // boxes of 128 x 32; activations m rows of K BF16, pitch 2 * a_row_stride, box 128 x m.
  const auto map_field = [&](std::size_t launch, std::size_t arg, std::size_t i) {
    REQUIRE(l[launch].args.at(arg).size() == 128);
    std::uint64_t v = 0;
    std::memcpy(&v, l[launch].args[arg].data() + 8 * i, 8);
    return v;
  };
  CHECK(map_field(0, 11, 0) == kW.address);
  CHECK(map_field(0, 11, 2) == 7168);
  CHECK(map_field(0, 11, 3) == 576);
  CHECK(map_field(0, 11, 6) == 32);
  CHECK(map_field(0, 12, 0) == kIn.address);
  CHECK(map_field(0, 12, 1) == 2);
  CHECK(map_field(0, 12, 3) == 4);
  CHECK(map_field(1, 12, 4) == 4104 * 2);
  CHECK(map_field(1, 12, 6) == 16);
  // N = 28672: 128-row tiles; 4 stages of 16384 + 16*256 bytes; a programmatic launch.
  CHECK(l[1].config.grid.x == 224);
  CHECK(l[1].config.grid.y == 1);
  CHECK(l[1].config.cluster.x == 0);  // a split of one launches without a cluster
  CHECK(l[1].config.programmatic_dependent);
  CHECK(l[1].config.shared_bytes == 128 + 4 * (16384 + 16 * 256));
  CHECK(l[1].u32_arg(9) == 128);
  CHECK(l[1].u32_arg(10) == 4);  // with PDL the whole ring ahead of the wait
  // Tuned by the caller.
  CHECK(l[2].config.grid.x == 12);
  CHECK(l[2].config.shared_bytes == 128 + 7 * (16384 + 256));
  CHECK(l[2].u32_arg(9) == 128);
  check_split_guards("w8a16_gemm_m16_stream", [&](std::uint32_t m, std::uint32_t kk,
                                                   std::uint32_t split) {
    w8a16_gemm_m16_stream(f.gpu, k, kIn, kW, kS, kOut, m, 576, kk, kk, 576, split, 0);
  });
  CHECK(error_of([&] {
          w8a16_gemm_m16_stream(f.gpu, k, kIn, kW, kS, kOut, 4, 576, 256, 256, 576, 1, 0, {},
                                StreamTuning{48, 0});
        }) == "w8a16_gemm_m16_stream: tile rows=48 not one of 32, 64, 128");
  CHECK(error_of([&] {
          w8a16_gemm_m16_stream(f.gpu, k, kIn, kW, kS, kOut, 4, 576, 256, 256, 576, 1, 0, {},
                                StreamTuning{0, 13});
        }) == "w8a16_gemm_m16_stream: stages=13 outside 2..=12");
  CHECK(error_of([&] {
          w8a16_gemm_m16_stream(f.gpu, k, kIn, kW, kS, kOut, 16, 576, 256, 256, 576, 1, 0, {},
                                StreamTuning{128, 12});
        }) == "w8a16_gemm_m16_stream: a ring of 12 stages of 20480 bytes needs 245888 bytes of "
              "shared memory, over the 231424 a block can have beside its static shared memory");
  CHECK(f.gpu.launches().size() == 3);
}

TEST_CASE("stream-K launcher: persistent grid, ring, workspace split, guards") {
  Fixture f;
  const KernelHandle k = f.cache.kernel("w8a16_gemm_m16_streamk");
  // One slot of 256 threads x 8 flagged 64-bit words per CTA, whatever N.
  const std::uint64_t need = w8a16_gemm_m16_streamk_workspace_bytes(28672, 264);
  CHECK(need == 264 * 256 * 8 * 8);
  CHECK(w8a16_gemm_m16_streamk_workspace_bytes(576, 264) == need);
  w8a16_gemm_m16_streamk(f.gpu, k, kIn, kW, kS, kOut, 16, 28672, 4096, 4104, 28680,
                         {kWs, need}, 264, 0);
  // More CTAs than the 3 x 2 units of N = 300, K = 256: one CTA per unit.
  w8a16_gemm_m16_streamk(f.gpu, k, kIn, kW, kS, kOut, 1, 300, 256, 256, 300,
                         {kWs, w8a16_gemm_m16_streamk_workspace_bytes(300, 6)}, 1000, 0,
                         M16LaunchOptions{true}, 7);
  const auto l = f.gpu.launches();
  REQUIRE(l.size() == 2);
  CHECK(l[0].config.grid.x == 264);
  CHECK(l[0].config.grid.y == 1);
  CHECK(l[0].config.block.x == 288);
  CHECK(l[0].config.cluster.x == 0);
  CHECK_FALSE(l[0].config.programmatic_dependent);
  CHECK(l[0].config.shared_bytes == 128 + 4 * (16384 + 16 * 256));
  REQUIRE(l[0].args.size() == 13);
  CHECK(l[0].u32_arg(7) == 4104);
  CHECK(l[0].u32_arg(8) == 28680);
  CHECK(l[0].u64_arg(9) == kWs.address);  // the partials' slots
  CHECK(l[0].u32_arg(10) == 0);  // no weight stage ahead of the wait without PDL
  CHECK(l[1].config.grid.x == 6);
  CHECK(l[1].config.programmatic_dependent);
  CHECK(l[1].config.shared_bytes == 128 + 7 * (16384 + 256));
  CHECK(l[1].u64_arg(9) == kWs.address);
  CHECK(l[1].u32_arg(10) == 7);  // with PDL the whole ring ahead of the wait

  const auto call = [&](StreamKWorkspace ws, std::uint32_t ctas) {
    return error_of([&] {
      w8a16_gemm_m16_streamk(f.gpu, k, kIn, kW, kS, kOut, 4, 576, 7168, 7168, 576, ws, ctas, 0);
    });
  };
  const std::uint64_t small = w8a16_gemm_m16_streamk_workspace_bytes(576, 8);
  CHECK(call({kWs, small}, 0) == "w8a16_gemm_m16_streamk: ctas=0 must be at least 1");
  CHECK(call({DevicePtr(), small}, 8) == "w8a16_gemm_m16_streamk: workspace is null");
  CHECK(call({kWs + 8, small}, 8) ==
        "w8a16_gemm_m16_streamk: workspace 0x50000000008 is not 16-byte aligned");
  CHECK(call({kWs, small}, 9) ==
        fmt::format("w8a16_gemm_m16_streamk: workspace of {} bytes, N=576 on 9 CTAs needs {} "
                    "(w8a16_gemm_m16_streamk_workspace_bytes)",
                    small, w8a16_gemm_m16_streamk_workspace_bytes(576, 9)));
  CHECK(error_of([&] {
          w8a16_gemm_m16_streamk(f.gpu, k, kIn, kW, kS, kOut, 17, 576, 256, 256, 576,
                                 {kWs, small}, 8, 0);
        }) == "w8a16_gemm_m16_streamk: m=17 outside 1..=16 (kernel M tile)");
  CHECK(error_of([&] {
          w8a16_gemm_m16_streamk(f.gpu, k, kIn, kW, kS, kOut, 4, 576, 0, 0, 576, {kWs, small}, 8,
                                 0);
        }) == "w8a16_gemm_m16_streamk: K=0 leaves no 128-K block (this entry needs K >= 128)");
  // The tensor copies' coordinates are signed 32-bit: K up to 2^31 (the last block at
  // 2^31 - 128), not past it.
  const auto huge_k = [&](std::uint32_t kk) {
    return error_of([&] {
      w8a16_gemm_m16_streamk(f.gpu, k, kIn, kW, kS, kOut, 1, 1, kk, kk, 1, {kWs, small}, 8, 0);
    });
  };
  CHECK(huge_k(1u << 31) == "<no error>");
  CHECK(huge_k((1u << 31) + 128) == "w8a16_gemm_m16_streamk: K=2147483776 over 2^31, past the "
                                      "tensor copies' signed 32-bit coordinates");
  CHECK(error_of([&] {
          w8a16_gemm_m16_stream(f.gpu, f.cache.kernel("w8a16_gemm_m16_stream"), kIn, kW, kS,
                                kOut, 1, 1, (1u << 31) + 128, (1u << 31) + 128, 1, 1, 0);
        }) == "w8a16_gemm_m16_stream: K=2147483776 over 2^31, past the tensor copies' signed "
              "32-bit coordinates");
  // N too: the last tile's first row is a row coordinate.
  CHECK(error_of([&] {
          w8a16_gemm_m16_stream(f.gpu, f.cache.kernel("w8a16_gemm_m16_stream"), kIn, kW, kS,
                                kOut, 1, (1u << 31) + 16, 128, 128, (1u << 31) + 16, 1, 0);
        }) == "w8a16_gemm_m16_stream: N=2147483664 over 2^31, past the tensor copies' signed "
              "32-bit coordinates");
  CHECK(error_of([&] {
          w8a16_gemm_m16_streamk(f.gpu, k, kIn, kW, kS, DevicePtr(), 4, 576, 256, 256, 576,
                                 {kWs, small}, 8, 0);
        }).starts_with("w8a16_gemm_m16_streamk: "));
  CHECK(f.gpu.launches().size() == 3);  // and the one at K = 2^31
}

TEST_CASE("skinny launcher: chunks of K per 16 rows, its two kernels, workspace, guards") {
  Fixture f;
  const KernelHandle one = f.cache.kernel("w8a16_gemm_m16_skinny");
  const KernelHandle two = f.cache.kernel("w8a16_gemm_m16_skinny2");
  // kv_a on 8 warps of one block: 7 chunks of 1024 K, 36 groups of 16 rows, a slot of 256
  // words for every chunk after the first.
  CHECK(w8a16_gemm_m16_skinny_chunks(7168, 8, 1) == 7);
  CHECK(w8a16_gemm_m16_skinny_chunks(7168, 8, 2) == 4);
  CHECK(w8a16_gemm_m16_skinny_chunks(7168, 3, 1) == 19);
  const std::uint64_t need = w8a16_gemm_m16_skinny_workspace_bytes(576, 7168, 8, 1);
  CHECK(need == 36 * 6 * 256 * 8);
  CHECK(w8a16_gemm_m16_skinny_workspace_bytes(577, 7168, 8, 1) == 37 * 6 * 256 * 8);
  // One chunk covers K: no workspace at all.
  CHECK(w8a16_gemm_m16_skinny_workspace_bytes(4096, 1024, 8, 1) == 0);
  CHECK(w8a16_gemm_m16_skinny_workspace_bytes(4096, 2048, 8, 2) == 0);
  w8a16_gemm_m16_skinny(f.gpu, one, kIn, kW, kS, kOut, 3, 576, 7168, 7176, 580, {kWs, need}, 8,
                        0);
  w8a16_gemm_m16_skinny(f.gpu, two, kIn, kW, kS, kOut, 12, 33, 1024, 1024, 33, {}, 4, 0,
                        M16LaunchOptions{true});
  const auto l = f.gpu.launches();
  REQUIRE(l.size() == 2);
  CHECK(l[0].function == one.function);
  CHECK(l[0].config.grid.x == 7);
  CHECK(l[0].config.grid.y == 36);
  CHECK(l[0].config.block.x == 256);
  CHECK(l[0].config.cluster.x == 0);
  CHECK_FALSE(l[0].config.programmatic_dependent);
  CHECK(l[0].config.shared_bytes == 8 * 8 * 17 * 4);
  REQUIRE(l[0].args.size() == 10);
  CHECK(l[0].u32_arg(7) == 7176);
  CHECK(l[0].u32_arg(8) == 580);
  CHECK(l[0].u64_arg(9) == kWs.address);
  // m = 12: the 16-token build; 4 warps of two blocks cover K = 1024 in one chunk.
  CHECK(l[1].function == two.function_above8);
  CHECK(l[1].config.grid.x == 1);
  CHECK(l[1].config.grid.y == 3);
  CHECK(l[1].config.block.x == 128);
  CHECK(l[1].config.shared_bytes == 4 * 16 * 17 * 4);
  CHECK(l[1].config.cluster.x == 0);
  CHECK(l[1].config.programmatic_dependent);
  // Asked for, the 7 chunks of a row group form a cluster (sm_90) and hand their partials
  // to chunk 0 through its shared memory: 6 partials of 16 x 16 FP32 beside the warps'
  // buffer. More chunks than a portable cluster holds (14 on 4 warps), or a GPU before
  // sm_90: the handoff through the workspace, no cluster.
  constexpr M16LaunchOptions kCluster{false, true};
  const std::uint64_t need4 = w8a16_gemm_m16_skinny_workspace_bytes(576, 7168, 4, 1);
  w8a16_gemm_m16_skinny(f.gpu, one, kIn, kW, kS, kOut, 3, 576, 7168, 7168, 576, {kWs, need}, 8,
                        0, kCluster);
  w8a16_gemm_m16_skinny(f.gpu, one, kIn, kW, kS, kOut, 3, 576, 7168, 7168, 576, {kWs, need4}, 4,
                        0, kCluster);
  f.gpu.target_name = "sm_89";
  w8a16_gemm_m16_skinny(f.gpu, one, kIn, kW, kS, kOut, 3, 576, 7168, 7168, 576, {kWs, need}, 8,
                        0, kCluster);
  f.gpu.target_name = "sm_90";
  const auto l2 = f.gpu.launches();
  REQUIRE(l2.size() == 5);
  CHECK(l2[2].config.grid.x == 7);
  CHECK(l2[2].config.cluster.x == 7);
  CHECK(l2[2].config.cluster.y == 1);
  CHECK(l2[2].config.cluster.z == 1);
  CHECK(l2[2].config.shared_bytes == 8 * 8 * 17 * 4 + 6 * 1024);
  CHECK(l2[3].config.grid.x == 14);
  CHECK(l2[3].config.cluster.x == 0);
  CHECK(l2[3].config.shared_bytes == 4 * 8 * 17 * 4);
  CHECK(l2[4].config.grid.x == 7);
  CHECK(l2[4].config.cluster.x == 0);
  CHECK(l2[4].config.shared_bytes == 8 * 8 * 17 * 4);

  const auto call = [&](const KernelHandle& h, StreamKWorkspace ws, std::uint32_t warps) {
    return error_of([&] {
      w8a16_gemm_m16_skinny(f.gpu, h, kIn, kW, kS, kOut, 4, 576, 7168, 7168, 576, ws, warps, 0);
    });
  };
  CHECK(call(one, {kWs, need}, 0) == "w8a16_gemm_m16_skinny: warps=0 outside 1..=16");
  CHECK(call(one, {kWs, need}, 17) == "w8a16_gemm_m16_skinny: warps=17 outside 1..=16");
  CHECK(call(f.cache.kernel("w8a16_gemm_m16_streamk"), {kWs, need}, 8) ==
        "w8a16_gemm_m16_skinny: the handle is of 'w8a16_gemm_m16_streamk', not of "
        "w8a16_gemm_m16_skinny or w8a16_gemm_m16_skinny2");
  CHECK(call(one, {DevicePtr(), need}, 8) ==
        "w8a16_gemm_m16_skinny: workspace is null, and K=7168 on 8 warps of 1 blocks takes 7 "
        "chunks");
  CHECK(call(one, {kWs + 8, need}, 8) ==
        "w8a16_gemm_m16_skinny: workspace 0x50000000008 is not 16-byte aligned");
  CHECK(call(one, {kWs, need - 1}, 8) ==
        fmt::format("w8a16_gemm_m16_skinny: workspace of {} bytes, N=576 K=7168 on 8 warps of 1 "
                    "blocks needs {} (w8a16_gemm_m16_skinny_workspace_bytes)",
                    need - 1, need));
  CHECK(error_of([&] {
          w8a16_gemm_m16_skinny(f.gpu, one, kIn, kW, kS, kOut, 17, 576, 7168, 7168, 576,
                                {kWs, need}, 8, 0);
        }) == "w8a16_gemm_m16_skinny: m=17 outside 1..=16 (kernel M tile)");
  CHECK(error_of([&] {
          w8a16_gemm_m16_skinny(f.gpu, one, kIn, kW, kS, kOut, 1, 1u << 21, 1024, 1024, 1u << 21,
                                {}, 8, 0);
        }) == "w8a16_gemm_m16_skinny: N=2097152 needs 131072 CTAs of 16 rows, over the grid's "
              "65535");
  CHECK(error_of([&] {
          w8a16_gemm_m16_skinny(f.gpu, one, kIn, kW, kS, DevicePtr(), 1, 576, 1024, 1024, 576,
                                {}, 8, 0);
        }).starts_with("w8a16_gemm_m16_skinny: "));
  CHECK(f.gpu.launches().size() == 5);
}

TEST_CASE("skinny deep launcher: the caller's blocks per warp, its own handle, guards") {
  Fixture f;
  const KernelHandle deep = f.cache.kernel("w8a16_gemm_m16_skinny_deep");
  // Llama-3-8B gate_up on 8 warps of 4 blocks: one chunk of 4096 K, no workspace.
  CHECK(w8a16_gemm_m16_skinny_workspace_bytes(28672, 4096, 8, 4) == 0);
  w8a16_gemm_m16_skinny_deep(f.gpu, deep, kIn, kW, kS, kOut, 1, 28672, 4096, 4096, 28672, {}, 8,
                             4, 0);
  // DeepSeek-V3 down on 8 warps of 8 blocks: 3 chunks of 8192 K.
  const std::uint64_t need = w8a16_gemm_m16_skinny_workspace_bytes(7168, 18432, 8, 8);
  CHECK(need == 448 * 2 * 256 * 8);
  w8a16_gemm_m16_skinny_deep(f.gpu, deep, kIn, kW, kS, kOut, 16, 7168, 18432, 18432, 7168,
                             {kWs, need}, 8, 8, 0, M16LaunchOptions{true});
  const auto l = f.gpu.launches();
  REQUIRE(l.size() == 2);
  CHECK(l[0].function == deep.function);
  CHECK(l[0].config.grid.x == 1);
  CHECK(l[0].config.grid.y == 1792);
  CHECK(l[0].config.block.x == 256);
  CHECK_FALSE(l[0].config.programmatic_dependent);
  CHECK(l[1].function == deep.function_above8);
  CHECK(l[1].config.grid.x == 3);
  CHECK(l[1].config.grid.y == 448);
  CHECK(l[1].config.programmatic_dependent);
  CHECK(l[1].u64_arg(9) == kWs.address);

  const auto call = [&](const KernelHandle& h, std::uint32_t warp_blocks) {
    return error_of([&] {
      w8a16_gemm_m16_skinny_deep(f.gpu, h, kIn, kW, kS, kOut, 4, 7168, 18432, 18432, 7168,
                                 {kWs, need}, 8, warp_blocks, 0);
    });
  };
  CHECK(call(deep, 0) == "w8a16_gemm_m16_skinny_deep: warp_blocks=0 outside 1..=1024");
  CHECK(error_of([&] {
          w8a16_gemm_m16_skinny_deep(f.gpu, deep, kIn, kW, kS, kOut, 4, 7168, 0, 0, 7168, {}, 8,
                                     1, 0);
        }) == "w8a16_gemm_m16_skinny_deep: K=0 leaves no 128-K block (this entry needs K >= "
              "128)");
  CHECK(call(deep, 1025) == "w8a16_gemm_m16_skinny_deep: warp_blocks=1025 outside 1..=1024");
  CHECK(call(f.cache.kernel("w8a16_gemm_m16_skinny"), 8) ==
        "w8a16_gemm_m16_skinny_deep: the handle is of 'w8a16_gemm_m16_skinny', not of "
        "w8a16_gemm_m16_skinny_deep, w8a16_gemm_m16_skinny_deep3 or "
        "w8a16_gemm_m16_skinny_deep32");
  CHECK(call(deep, 4) ==
        fmt::format("w8a16_gemm_m16_skinny_deep: workspace of {} bytes, N=7168 K=18432 on 8 "
                    "warps of 4 blocks needs {} (w8a16_gemm_m16_skinny_workspace_bytes)",
                    need, w8a16_gemm_m16_skinny_workspace_bytes(7168, 18432, 8, 4)));
  // The other launcher does not guess the deep kernel's blocks per warp.
  CHECK(error_of([&] {
          w8a16_gemm_m16_skinny(f.gpu, deep, kIn, kW, kS, kOut, 4, 7168, 18432, 18432, 7168,
                                {kWs, need}, 8, 0);
        }) == "w8a16_gemm_m16_skinny: the handle is of w8a16_gemm_m16_skinny_deep, whose blocks "
              "per warp the caller gives: launch it with w8a16_gemm_m16_skinny_deep");
  CHECK(f.gpu.launches().size() == 2);
  // The three-per-SM form takes CTAs of up to 8 warps (its launch bounds).
  const KernelHandle deep3 = f.cache.kernel("w8a16_gemm_m16_skinny_deep3");
  w8a16_gemm_m16_skinny_deep(f.gpu, deep3, kIn, kW, kS, kOut, 12, 6144, 4096, 4096, 6144, {}, 8,
                             4, 0);
  REQUIRE(f.gpu.launches().size() == 3);
  CHECK(f.gpu.launches()[2].function == deep3.function_above8);
  CHECK(f.gpu.launches()[2].config.block.x == 256);
  CHECK(error_of([&] {
          w8a16_gemm_m16_skinny_deep(f.gpu, deep3, kIn, kW, kS, kOut, 12, 6144, 4096, 4096, 6144,
                                     {}, 16, 2, 0);
        }) == "w8a16_gemm_m16_skinny_deep: warps=16 on w8a16_gemm_m16_skinny_deep3, whose CTAs "
              "take at most 8 warps");
  CHECK(f.gpu.launches().size() == 3);

  // The 32-row form: ceil(N/32) CTAs per chunk, its one build (16 tokens) at every m, the
  // reduction buffer for 16 tokens; the workspace keeps a slot per 16-row group.
  const KernelHandle deep32 = f.cache.kernel("w8a16_gemm_m16_skinny_deep32");
  CHECK(deep32.function_above8 == nullptr);
  for (const std::uint32_t m : {1u, 16u}) {
    w8a16_gemm_m16_skinny_deep(f.gpu, deep32, kIn, kW, kS, kOut, m, 7168, 16384, 16384, 7168, {},
                               8, 16, 0);
    const auto last = f.gpu.launches().back();
    CHECK(last.function == deep32.function);
    CHECK(last.config.grid.x == 1);
    CHECK(last.config.grid.y == 224);
    CHECK(last.config.block.x == 256);
    CHECK(last.config.shared_bytes == 8 * 16 * 17 * 4);
  }
  // N = 7184: 225 CTAs, the last one's second row group past N.
  const std::uint64_t need32 = w8a16_gemm_m16_skinny_workspace_bytes(7184, 18432, 8, 8);
  CHECK(need32 == 449 * 2 * 256 * 8);
  w8a16_gemm_m16_skinny_deep(f.gpu, deep32, kIn, kW, kS, kOut, 3, 7184, 18432, 18432, 7184,
                             {kWs, need32}, 8, 8, 0);
  CHECK(f.gpu.launches().back().config.grid.x == 3);
  CHECK(f.gpu.launches().back().config.grid.y == 225);
  CHECK(error_of([&] {
          w8a16_gemm_m16_skinny_deep(f.gpu, deep32, kIn, kW, kS, kOut, 3, 7184, 18432, 18432,
                                     7184, {kWs, need32 - 8}, 8, 8, 0);
        }).starts_with("w8a16_gemm_m16_skinny_deep: workspace of "));
  CHECK(error_of([&] {
          w8a16_gemm_m16_skinny_deep(f.gpu, deep32, kIn, kW, kS, kOut, 1, 1u << 22, 128, 128,
                                     1u << 22, {}, 8, 1, 0);
        }) == "w8a16_gemm_m16_skinny_deep: N=4194304 needs 131072 CTAs of 32 rows, over the "
              "grid's 65535");
  CHECK(f.gpu.launches().size() == 6);
}

TEST_CASE("skinny deep launcher: a PDL plan's form in chunks of K takes the caller's workspace") {
  Fixture f;
  const KernelHandle deep = f.cache.kernel("w8a16_gemm_m16_skinny_deep");
  // q_a up to 8 tokens: 8 warps of 2 blocks, 4 chunks of 2048 K. Without a workspace
  // nothing is launched.
  const M16Plan q_a = plan_m16_gemm(1, 1536, 7168, 132, M16LaunchOptions{true});
  REQUIRE(q_a.entry == "w8a16_gemm_m16_skinny_deep");
  CHECK(error_of([&] {
          w8a16_gemm_m16_skinny_deep(f.gpu, deep, kIn, kW, kS, kOut, 1, 1536, 7168, 7168, 1536,
                                     {}, q_a.warps, q_a.warp_blocks, 0, M16LaunchOptions{true});
        }) == "w8a16_gemm_m16_skinny_deep: workspace is null, and K=7168 on 8 warps of 2 "
              "blocks takes 4 chunks");
  CHECK(f.gpu.launches().empty());
  w8a16_gemm_m16_skinny_deep(
      f.gpu, deep, kIn, kW, kS, kOut, 1, 1536, 7168, 7168, 1536,
      {kWs, w8a16_gemm_m16_skinny_workspace_bytes(1536, 7168, q_a.warps, q_a.warp_blocks)},
      q_a.warps, q_a.warp_blocks, 0, M16LaunchOptions{true});
  const auto l = f.gpu.launches();
  REQUIRE(l.size() == 1);
  CHECK(l[0].config.grid.x == 4);
  CHECK(l[0].config.grid.y == 96);
  CHECK(l[0].config.block.x == 256);
  CHECK(l[0].config.programmatic_dependent);
  CHECK(l[0].u64_arg(9) == kWs.address);
}

TEST_CASE("a token-split entry runs its build for m > 8; a handle without one is refused") {
  Fixture f;
  const KernelHandle h = f.cache.kernel("w8a16_gemm_m16");
  REQUIRE(h.function_above8 != nullptr);
  for (std::uint32_t m : {1u, 8u, 9u, 16u}) {
    CAPTURE(m);
    w8a16_gemm_m16(f.gpu, h, kIn, kW, kS, kOut, m, 4096, 4096, 0);
    CHECK(f.gpu.launches().back().function == (m > 8 ? h.function_above8 : h.function));
  }
  KernelHandle narrow_only = h;
  narrow_only.function_above8 = nullptr;
  const std::size_t launched = f.gpu.launches().size();
  CHECK(error_of([&] {
          w8a16_gemm_m16_strided(f.gpu, narrow_only, kIn, kW, kS, kOut, 9, 4096, 4096, 4096,
                                 4096, 0);
        }) == "w8a16_gemm_m16_strided: m = 9 needs the kernel's build for 9..16 tokens, and the "
              "handle of w8a16_gemm_m16 has none (take handles from ModuleCache::kernel or "
              "KernelService::kernel)");
  CHECK(f.gpu.launches().size() == launched);
  w8a16_gemm_m16(f.gpu, narrow_only, kIn, kW, kS, kOut, 8, 4096, 4096, 0);
  CHECK(f.gpu.launches().size() == launched + 1);
}

TEST_CASE("skinny launchers: max_ctas_per_sm asks for the shared memory that caps an SM's CTAs") {
  Fixture f;
  const KernelHandle skinny = f.cache.kernel("w8a16_gemm_m16_skinny");
  const KernelHandle deep = f.cache.kernel("w8a16_gemm_m16_skinny_deep");
  const std::uint64_t ws = w8a16_gemm_m16_skinny_workspace_bytes(576, 7168, 8, 1);
  // sm_90: 228 KiB per SM, 1 KiB reserved beside each CTA's own. `cap` CTAs fit, one more
  // does not.
  constexpr std::uint32_t kPerSm = 228 * 1024;
  for (std::uint32_t cap = 1; cap <= 6; ++cap) {
    CAPTURE(cap);
    w8a16_gemm_m16_skinny(f.gpu, skinny, kIn, kW, kS, kOut, 1, 576, 7168, 7168, 576, {kWs, ws},
                          8, 0, M16LaunchOptions{true, false, cap});
    const std::uint32_t bytes = f.gpu.launches().back().config.shared_bytes;
    CHECK(bytes % 128 == 0);
    CHECK(cap * (bytes + 1024) <= kPerSm);
    CHECK((cap + 1) * (bytes + 1024) > kPerSm);
  }
  // 0: the kernel's own reduction buffer; the deep launcher takes the same option.
  w8a16_gemm_m16_skinny(f.gpu, skinny, kIn, kW, kS, kOut, 1, 576, 7168, 7168, 576, {kWs, ws}, 8,
                        0, M16LaunchOptions{true});
  CHECK(f.gpu.launches().back().config.shared_bytes == 8 * 8 * 17 * 4);
  w8a16_gemm_m16_skinny_deep(f.gpu, deep, kIn, kW, kS, kOut, 1, 1536, 7168, 7168, 1536,
                             {kWs, w8a16_gemm_m16_skinny_workspace_bytes(1536, 7168, 8, 2)}, 8, 2,
                             0, M16LaunchOptions{true, false, 3});
  CHECK(f.gpu.launches().back().config.shared_bytes == (kPerSm / 4 + 1 - 1024 + 127) / 128 * 128);
  // A cap above what an SM runs is refused, nothing launched.
  const std::size_t launched = f.gpu.launches().size();
  CHECK(error_of([&] {
          w8a16_gemm_m16_skinny(f.gpu, skinny, kIn, kW, kS, kOut, 1, 576, 7168, 7168, 576,
                                {kWs, ws}, 8, 0, M16LaunchOptions{true, false, 33});
        }) == "w8a16_gemm_m16_skinny: max_ctas_per_sm=33 over the 32 CTAs an SM runs at most");
  CHECK(f.gpu.launches().size() == launched);
  // A target whose shared memory per SM is not known keeps the kernel's own.
  f.gpu.target_name = "sm_72";
  w8a16_gemm_m16_skinny(f.gpu, skinny, kIn, kW, kS, kOut, 1, 576, 7168, 7168, 576, {kWs, ws}, 8,
                        0, M16LaunchOptions{true, false, 2});
  CHECK(f.gpu.launches().back().config.shared_bytes == 8 * 8 * 17 * 4);
}
