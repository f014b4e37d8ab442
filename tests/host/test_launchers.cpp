// The launchers keep the seed's contract: argument order, grid and block, the guards in
// the seed's order with its messages, and nothing launched when a guard fails.
#include <doctest/doctest.h>

#include <cstring>
#include <functional>

#include <fmt/format.h>

#include <string>
#include <string_view>

#include "metrale/dense_ffn.hpp"
#include "metrale/error.hpp"
#include "metrale/w8a16_gemm_m16.hpp"
#include "metrale/w8a16_gemm_m16_splitk.hpp"
#include "metrale/w8a16_gemm_m16_stream.hpp"
#include "metrale/w8a16_gemm_m16_skinny.hpp"
#include "metrale/w8a16_gemm_m16_streamk.hpp"
#include "metrale/w8a16_gemv_batch16.hpp"
#include "support/fake_backend.hpp"

using namespace metrale;

namespace {

constexpr DevicePtr kIn(0x10000), kW(0x20000), kS(0x30000), kOut(0x40000);

std::string error_of(auto&& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

struct Fixture {
  test::RecordingBackend gpu;
  test::CountingCompiler compiler;
  ModuleCache cache{gpu, compiler.fn()};
};

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
          w8a16_gemm_m16(f.gpu, k, DevicePtr(0x10008), kW, kS, kOut, 1, 32, 128, 0);
        }) == "w8a16_gemm_m16: input=0x10008 is not 16-byte aligned");
  CHECK(error_of([&] {
          w8a16_gemm_m16(f.gpu, k, kIn, DevicePtr(0x20004), kS, kOut, 1, 32, 128, 0);
        }) == "w8a16_gemm_m16: weight=0x20004 is not 16-byte aligned");
  CHECK(error_of([&] {
          w8a16_gemm_m16(f.gpu, k, kIn, kW, DevicePtr(0x30002), kOut, 1, 32, 128, 0);
        }) == "w8a16_gemm_m16: block_scale=0x30002 is not 4-byte aligned");
  CHECK(error_of([&] {
          w8a16_gemm_m16(f.gpu, k, kIn, kW, kS, DevicePtr(0x40001), 1, 32, 128, 0);
        }) == "w8a16_gemm_m16: output=0x40001 is not 2-byte aligned");
  CHECK(error_of([&] {
          w8a16_gemm_m16(f.gpu, k, kIn, DevicePtr(0), kS, kOut, 1, 32, 128, 0);
        }) == "w8a16_gemm_m16: weight is a null device pointer");
  CHECK(error_of([&] {
          w8a16_gemv_batch16(f.gpu, k, kIn, kW, kS, kOut, 17, 32, 128, 0);
        }) == "w8a16_gemv_batch16: m=17 outside 1..=16 (kernel M tile)");
  CHECK(f.gpu.launches().empty());
}

TEST_CASE("a handle from another context is refused by the CUDA backend path") {
  // The recorder does not check contexts; the module cache stamps handles with the
  // backend's context so CudaBackend::launch can.
  Fixture f;
  CHECK(f.cache.kernel("w8a16_gemm_m16").context == f.gpu.context_id);
}

TEST_CASE("m16_tc_kernel: METRALE_FFN_M16_TC_NTILE unset / 32 / 64 / junk") {
  Fixture f;
  const M16TcKernel unset = m16_tc_kernel(f.cache, std::nullopt);
  CHECK((unset.launcher == &w8a16_gemm_m16));
  CHECK(std::string(unset.kernel.name) == "w8a16_gemm_m16");
  CHECK(unset.n_tile == 32);
  const M16TcKernel t32 = m16_tc_kernel(f.cache, "32");
  CHECK((t32.launcher == &w8a16_gemm_m16));
  const M16TcKernel t64 = m16_tc_kernel(f.cache, "64");
  CHECK((t64.launcher == &w8a16_gemm_m16_n64));
  CHECK(std::string(t64.kernel.name) == "w8a16_gemm_m16_n64");
  CHECK(t64.n_tile == 64);
  for (const char* junk : {"48", "", "64 ", "sixty-four"}) {
    CAPTURE(junk);
    CHECK(error_of([&] { m16_tc_kernel(f.cache, junk); }) ==
          fmt::format("METRALE_FFN_M16_TC_NTILE='{}' is not an accepted value (accepted: "
                      "unset, 32, 64)",
                      junk));
  }
}

TEST_CASE("dense FFN: 1..16 rows one launch, 17..32 rows two launches on row halves") {
  Fixture f;
  const M16TcKernel sel = m16_tc_kernel(f.cache, "64");
  const TargetLevers on{true, true};
  const std::uint32_t n = 4096, k = 1024;
  dense_ffn_m16_tc(sel, on, f.gpu, kIn, kW, kS, kOut, 9, n, k, 0);
  dense_ffn_m16_tc(sel, on, f.gpu, kIn, kW, kS, kOut, 24, n, k, 0);
  const auto l = f.gpu.launches();
  REQUIRE(l.size() == 3);
  CHECK(l[0].u32_arg(4) == 9);
  CHECK(l[1].u32_arg(4) == 16);
  CHECK(l[1].u64_arg(0) == kIn.address);
  CHECK(l[1].u64_arg(3) == kOut.address);
  CHECK(l[2].u32_arg(4) == 8);
  CHECK(l[2].u64_arg(0) == kIn.address + 16ull * k * 2);
  CHECK(l[2].u64_arg(3) == kOut.address + 16ull * n * 2);
  CHECK(l[2].config.grid.x == n / 64);

  CHECK(error_of([&] { dense_ffn_m16_tc(sel, on, f.gpu, kIn, kW, kS, kOut, 33, n, k, 0); }) ==
        "dense_ffn_m16_tc: rows=33 outside 1..=32");
  CHECK(error_of([&] {
          dense_ffn_m16_tc(sel, TargetLevers{false, true}, f.gpu, kIn, kW, kS, kOut, 4, n, k, 0);
        }) == "dense_ffn_m16_tc: the target's ffn_m16_tc lever is off");
  // A bad K fails on the first half: nothing is launched.
  CHECK_THROWS_AS(dense_ffn_m16_tc(sel, on, f.gpu, kIn, kW, kS, kOut, 20, n, 100, 0), Error);
  CHECK(f.gpu.launches().size() == 3);
}

TEST_CASE("QKV projection: one strided launch writing its slot of each row") {
  Fixture f;
  const KernelHandle ks = f.cache.kernel("w8a16_gemm_m16_strided");
  const TargetLevers on{true, true};
  const std::uint32_t q = 4096, kv = 1024, per_seq = q + 2 * kv, k = 4096;
  qkv_projection_m16_tc(on, f.gpu, ks, kIn, k, kW, kS, kOut, per_seq, QkvSlot{q, kv}, 5, k, 3);
  const auto l = f.gpu.launches();
  REQUIRE(l.size() == 1);
  CHECK(l[0].u64_arg(3) == kOut.address + 2ull * q);
  CHECK(l[0].u32_arg(4) == 5);
  CHECK(l[0].u32_arg(5) == kv);
  CHECK(l[0].u32_arg(7) == k);
  CHECK(l[0].u32_arg(8) == per_seq);
  CHECK(error_of([&] {
          qkv_projection_m16_tc(TargetLevers{true, false}, f.gpu, ks, kIn, k, kW, kS, kOut,
                                per_seq, QkvSlot{q, kv}, 5, k, 3);
        }) == "qkv_projection_m16_tc: the target's attn_m16_tc lever is off");
  CHECK_THROWS_AS(qkv_projection_m16_tc(on, f.gpu, ks, kIn, k, kW, kS, kOut, per_seq,
                                        QkvSlot{q + 2 * kv, 1}, 5, k, 3),
                  Error);
  CHECK(f.gpu.launches().size() == 1);
}

TEST_CASE("target levers: on from sm_80, off before") {
  CHECK(target_levers("sm_90").ffn_m16_tc);
  CHECK(target_levers("sm_80").attn_m16_tc);
  CHECK_FALSE(target_levers("sm_75").ffn_m16_tc);
  CHECK_THROWS_AS(target_levers("hopper"), Error);
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
  REQUIRE(l[0].args.size() == 12);
  CHECK(l[0].u32_arg(7) == 7168);
  CHECK(l[0].u32_arg(8) == 576);
  CHECK(l[0].u32_arg(9) == 32);
  // The tensor maps (as the recording backend packs them): weights N rows of K bytes in
  // boxes of 128 x 32; activations m rows of K BF16, pitch 2 * a_row_stride, box 128 x m.
  const auto map_field = [&](std::size_t launch, std::size_t arg, std::size_t i) {
    REQUIRE(l[launch].args.at(arg).size() == 128);
    std::uint64_t v = 0;
    std::memcpy(&v, l[launch].args[arg].data() + 8 * i, 8);
    return v;
  };
  CHECK(map_field(0, 10, 0) == kW.address);
  CHECK(map_field(0, 10, 2) == 7168);
  CHECK(map_field(0, 10, 3) == 576);
  CHECK(map_field(0, 10, 6) == 32);
  CHECK(map_field(0, 11, 0) == kIn.address);
  CHECK(map_field(0, 11, 1) == 2);
  CHECK(map_field(0, 11, 3) == 4);
  CHECK(map_field(1, 11, 4) == 4104 * 2);
  CHECK(map_field(1, 11, 6) == 16);
  // N = 28672: 128-row tiles; 4 stages of 16384 + 16*256 bytes; a programmatic launch.
  CHECK(l[1].config.grid.x == 224);
  CHECK(l[1].config.grid.y == 1);
  CHECK(l[1].config.cluster.x == 0);  // a split of one launches without a cluster
  CHECK(l[1].config.programmatic_dependent);
  CHECK(l[1].config.shared_bytes == 128 + 4 * (16384 + 16 * 256));
  CHECK(l[1].u32_arg(9) == 128);
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
  constexpr DevicePtr kWs(0x50000);
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
  REQUIRE(l[0].args.size() == 12);
  CHECK(l[0].u32_arg(7) == 4104);
  CHECK(l[0].u32_arg(8) == 28680);
  CHECK(l[0].u64_arg(9) == kWs.address);  // the partials' slots
  CHECK(l[1].config.grid.x == 6);
  CHECK(l[1].config.programmatic_dependent);
  CHECK(l[1].config.shared_bytes == 128 + 7 * (16384 + 256));
  CHECK(l[1].u64_arg(9) == kWs.address);

  const auto call = [&](StreamKWorkspace ws, std::uint32_t ctas) {
    return error_of([&] {
      w8a16_gemm_m16_streamk(f.gpu, k, kIn, kW, kS, kOut, 4, 576, 7168, 7168, 576, ws, ctas, 0);
    });
  };
  const std::uint64_t small = w8a16_gemm_m16_streamk_workspace_bytes(576, 8);
  CHECK(call({kWs, small}, 0) == "w8a16_gemm_m16_streamk: ctas=0 must be at least 1");
  CHECK(call({DevicePtr(), small}, 8) == "w8a16_gemm_m16_streamk: workspace is null");
  CHECK(call({kWs + 8, small}, 8) ==
        "w8a16_gemm_m16_streamk: workspace 0x50008 is not 16-byte aligned");
  CHECK(call({kWs, small}, 9) ==
        fmt::format("w8a16_gemm_m16_streamk: workspace of {} bytes, N=576 on 9 CTAs needs {} "
                    "(w8a16_gemm_m16_streamk_workspace_bytes)",
                    small, w8a16_gemm_m16_streamk_workspace_bytes(576, 9)));
  CHECK(error_of([&] {
          w8a16_gemm_m16_streamk(f.gpu, k, kIn, kW, kS, kOut, 17, 576, 256, 256, 576,
                                 {kWs, small}, 8, 0);
        }) == "w8a16_gemm_m16_streamk: m=17 outside 1..=16 (kernel M tile)");
  CHECK(error_of([&] {
          w8a16_gemm_m16_streamk(f.gpu, k, kIn, kW, kS, DevicePtr(), 4, 576, 256, 256, 576,
                                 {kWs, small}, 8, 0);
        }).starts_with("w8a16_gemm_m16_streamk: "));
  CHECK(f.gpu.launches().size() == 2);
}

TEST_CASE("skinny launcher: chunks of K per 16 rows, its two kernels, workspace, guards") {
  Fixture f;
  const KernelHandle one = f.cache.kernel("w8a16_gemm_m16_skinny");
  const KernelHandle two = f.cache.kernel("w8a16_gemm_m16_skinny2");
  constexpr DevicePtr kWs(0x50000);
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
        "w8a16_gemm_m16_skinny: workspace 0x50008 is not 16-byte aligned");
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
        }) == "w8a16_gemm_m16_skinny: N=2097152 needs 131072 row groups, over the grid's 65535");
  CHECK(error_of([&] {
          w8a16_gemm_m16_skinny(f.gpu, one, kIn, kW, kS, DevicePtr(), 1, 576, 1024, 1024, 576,
                                {}, 8, 0);
        }).starts_with("w8a16_gemm_m16_skinny: "));
  CHECK(f.gpu.launches().size() == 5);
}

TEST_CASE("skinny deep launcher: the caller's blocks per warp, its own handle, guards") {
  Fixture f;
  const KernelHandle deep = f.cache.kernel("w8a16_gemm_m16_skinny_deep");
  constexpr DevicePtr kWs(0x50000);
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
  CHECK(call(deep, 1025) == "w8a16_gemm_m16_skinny_deep: warp_blocks=1025 outside 1..=1024");
  CHECK(call(f.cache.kernel("w8a16_gemm_m16_skinny"), 8) ==
        "w8a16_gemm_m16_skinny_deep: the handle is of 'w8a16_gemm_m16_skinny', not of "
        "w8a16_gemm_m16_skinny_deep or w8a16_gemm_m16_skinny_deep3");
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
}

TEST_CASE("plan_m16_gemm: stream-K, streaming, 64-wide or split tiles where each fills the SMs") {
  const auto plan = [](std::uint32_t n, std::uint32_t k) { return plan_m16_gemm(1, n, k, 132); };
  // 64 MiB and more: stream-K on two CTAs per SM at every m.
  for (const auto& [n, k] : {std::pair{28672u, 4096u}, {51200u, 5120u}, {36864u, 7168u},
                            {5120u, 25600u}, {7168u, 16384u}, {7168u, 18432u}}) {
    for (const std::uint32_t m : {1u, 8u, 16u}) {
      const M16Plan p = plan_m16_gemm(m, n, k, 132);
      CHECK(p.entry == "w8a16_gemm_m16_streamk");
      CHECK(p.split == 1);
      CHECK(p.ctas == 264u);
      CHECK(p.stages == (m <= 8 ? 3u : 0u));
    }
  }
  CHECK(streamk_plan_stages(1, 264, 132) == 3u);
  CHECK(streamk_plan_stages(8, 396, 132) == 3u);
  CHECK(streamk_plan_stages(9, 264, 132) == 0u);
  CHECK(streamk_plan_stages(1, 263, 132) == 0u);
  CHECK(streamk_plan_stages(1, 132, 132) == 0u);
  CHECK(streamk_plan_stages(1, 264, 0) == 0u);
  CHECK(plan_m16_gemm(1, 51200, 5120, 114).ctas == 228);
  // Where the deep skinny entry declines (K under 1536; with PDL, CTAs that do not fill
  // two thirds of the slots or do not fit at once): one CTA per SM from 32 MiB at 2 tokens
  // and more (32768 x 1024; Qwen3-32B qkv with PDL up to 8 tokens)
  // and from 20 MiB at 5 (25600 x 1024; Llama-3-8B qkv with PDL above 8 tokens); else the
  // tiled entries below.
  const M16LaunchOptions pdl{true};
  for (const std::uint32_t m : {5u, 8u}) {
    const M16Plan p = plan_m16_gemm(m, 10240, 5120, 132, pdl);
    CHECK(p.entry == "w8a16_gemm_m16_streamk");
    CHECK(p.ctas == 132u);
  }
  for (const std::uint32_t m : {5u, 8u, 9u, 16u}) {
    CAPTURE(m);
    for (const M16Plan& p : {plan_m16_gemm(m, 32768, 1024, 132),
                             plan_m16_gemm(m, 25600, 1024, 132)}) {
      CHECK(p.entry == "w8a16_gemm_m16_streamk");
      CHECK(p.ctas == 132u);
      CHECK(p.stages == 0u);
    }
    // q_b with PDL: up to 8 tokens its 1536 deep CTAs of 2 warps fill 73 % of 2112 slots,
    // over the two thirds they need there; above, 97 % of the three-per-SM form's 1584,
    // over the 90 % they need there.
    const M16Plan q_b = plan_m16_gemm(m, 24576, 1536, 132, pdl);
    CHECK(q_b.entry == (m <= 8 ? "w8a16_gemm_m16_skinny_deep" : "w8a16_gemm_m16_skinny_deep3"));
    CHECK(q_b.warps == 2u);
    CHECK(q_b.ctas == 0u);
  }
  CHECK(plan_m16_gemm(2, 10240, 5120, 132, pdl).entry == "w8a16_gemm_m16_streamk");
  CHECK(plan_m16_gemm(2, 32768, 1024, 132).entry == "w8a16_gemm_m16_streamk");
  // Above 8 tokens with PDL Llama-3-8B qkv takes the deep kernel's three-per-SM form.
  CHECK(plan_m16_gemm(9, 6144, 4096, 132, pdl).entry == "w8a16_gemm_m16_skinny_deep3");
  // 48 MiB at m = 1 with K = 1024 (1536 seed tiles): the seed's entry.
  CHECK(plan(49152, 1024).entry == "w8a16_gemm_m16");
  CHECK(plan(49152, 1024).ctas == 0);
  // Under one full chunk of K the skinny entry is not picked: 18 tiles with too few K
  // blocks to share, no split.
  CHECK(plan(576, 256).entry == "w8a16_gemm_m16");
  CHECK(plan(576, 256).split == 1);
  // Above 8 tokens from 16 to 20 MiB, the 64-wide tile where its tiles cover the SMs.
  CHECK(plan_m16_gemm(9, 17408, 1024, 132).entry == "w8a16_gemm_m16_n64");
  // The streaming entry where a split gives 1.5 to 2 of its 128-row CTAs per SM with 8 K
  // blocks each: 208 tiles unsplit at K = 1024, with or without PDL; 96 tiles split 2 are
  // too few. At K = 2048 the deep entry takes 198 tiles' rows instead (1584 CTAs of 2
  // warps fill 75 % of 2112 slots).
  for (const M16LaunchOptions launch : {M16LaunchOptions{}, pdl}) {
    CHECK(plan_m16_gemm(1, 26624, 1024, 132, launch).entry == "w8a16_gemm_m16_stream");
    CHECK(plan_m16_gemm(1, 26624, 1024, 132, launch).split == 1);
  }
  CHECK(plan_m16_gemm(1, 25344, 2048, 132, pdl).entry == "w8a16_gemm_m16_skinny_deep");
  CHECK(plan_m16_gemm(1, 25344, 2048, 132, pdl).warps == 2u);
  CHECK(plan_m16_gemm(1, 12288, 2048, 132, pdl).entry != "w8a16_gemm_m16_stream");
}

TEST_CASE("plan_m16_gemm: the skinny entry on small layers") {
  const auto skinny = [](std::uint32_t m, std::uint32_t n, std::uint32_t k, bool pdl = false) {
    const M16Plan p = plan_m16_gemm(m, n, k, 132, M16LaunchOptions{pdl});
    if (p.entry != "w8a16_gemm_m16_skinny") return false;
    CHECK(p.warps == W8A16_GEMM_M16_SKINNY_WARPS);
    CHECK(p.split == 1);
    CHECK(p.ctas == 0);
    return true;
  };
  for (std::uint32_t m = 1; m <= 16; ++m) {
    CAPTURE(m);
    // Under 16 MiB (DeepSeek-V3 kv_a, q_a, 1024 x 2048, 1024 x 8192, 2048 x 2048), with or
    // without PDL.
    for (const auto& [n, k] : {std::pair{576u, 7168u}, {1536u, 7168u}, {1024u, 2048u},
                               {1024u, 8192u}, {2048u, 2048u}}) {
      CHECK(skinny(m, n, k));
      CHECK(skinny(m, n, k, true));
    }
    // Above 8 tokens the deep entry on 16 warps where its CTAs fill 90 % of the slots and K
    // is 4096 or more: 2048 rows (128 CTAs in 132 slots), not q_a's 1536 (96).
    for (const auto& [n, k] : {std::pair{2048u, 4096u}, {2048u, 7168u}}) {
      for (const bool pdl : {false, true}) {
        const M16Plan p = plan_m16_gemm(m, n, k, 132, M16LaunchOptions{pdl});
        if (m <= 8) {
          CHECK(skinny(m, n, k, pdl));
        } else {
          CHECK(p.entry == "w8a16_gemm_m16_skinny_deep");
          CHECK(p.warps == 16u);
          CHECK(p.warp_blocks == (k / 128 + 15) / 16);
        }
      }
    }
    // 16 MiB with K = 1024 (under the deep entry's 1536): without PDL only; up to 24 MiB
    // up to 8 tokens.
    CHECK(skinny(m, 16384, 1024));
    CHECK_FALSE(skinny(m, 16384, 1024, true));
    CHECK(skinny(m, 24576, 1024) == (m <= 8));
    CHECK_FALSE(skinny(m, 24576, 1024, true));
    // From 16 MiB with K >= 1536 the deep entry takes over (its own case); with PDL where it
    // declines (CTAs of 4 warps), not this entry either; but where the deep entry's CTAs
    // would fill under half the slots (2048 x 8192 up to 8 tokens), this one, with or
    // without PDL.
    CHECK(skinny(m, 2048, 8192) == (m <= 8));
    CHECK(skinny(m, 2048, 8192, true) == (m <= 8));
    for (const auto& [n, k] : {std::pair{4096u, 4096u}, {8192u, 2048u}, {6144u, 4096u}, {12288u, 2048u}, {4096u, 14336u}, {10240u, 5120u},
                              {24576u, 1536u}}) {
      CHECK_FALSE(skinny(m, n, k));
      CHECK_FALSE(skinny(m, n, k, true));
    }
    // Nor over 24 MiB with K under 1536, nor from 64 MiB.
    CHECK_FALSE(skinny(m, 26624, 1024));
    CHECK_FALSE(skinny(m, 4096, 16384));
    CHECK_FALSE(skinny(m, 28672, 4096));
    // Under one chunk of K (1024).
    CHECK_FALSE(skinny(m, 16384, 896));
    CHECK_FALSE(skinny(m, 576, 256, true));
  }
}

TEST_CASE("plan_m16_gemm: the deep skinny entry on 16-64 MiB layers, one chunk of K") {
  // The CTAs an SM holds at 64 / 96 registers and the warps that fit a layer's CTAs on the
  // device at once: 16, else 8, else 4.
  CHECK(w8a16_gemm_m16_skinny_deep_ctas_per_sm(1, 16) == 2);
  CHECK(w8a16_gemm_m16_skinny_deep_ctas_per_sm(8, 8) == 4);
  CHECK(w8a16_gemm_m16_skinny_deep_ctas_per_sm(8, 4) == 8);
  CHECK(w8a16_gemm_m16_skinny_deep_ctas_per_sm(9, 16) == 1);
  CHECK(w8a16_gemm_m16_skinny_deep_ctas_per_sm(16, 8) == 2);
  CHECK(w8a16_gemm_m16_skinny_deep_ctas_per_sm(16, 4) == 5);
  CHECK(w8a16_gemm_m16_skinny_deep_ctas_per_sm(1, 0) == 0);
  // The three-per-SM form: 80 registers above 8 tokens, CTAs of at most 8 warps.
  CHECK(w8a16_gemm_m16_skinny_deep3_ctas_per_sm(16, 8) == 3);
  CHECK(w8a16_gemm_m16_skinny_deep3_ctas_per_sm(16, 4) == 6);
  CHECK(w8a16_gemm_m16_skinny_deep3_ctas_per_sm(8, 8) == 4);
  CHECK(w8a16_gemm_m16_skinny_deep3_ctas_per_sm(16, 16) == 0);
  const auto form = [](std::uint32_t m, std::uint32_t n, std::uint32_t sms) {
    const SkinnyDeepForm f = w8a16_gemm_m16_skinny_deep_form(m, n, sms);
    return fmt::format("{}/{} x{}", f.kernel, f.warps, f.ctas_per_sm);
  };
  CHECK(form(1, 4096, 132) == "w8a16_gemm_m16_skinny_deep/16 x2");   // 256 CTAs, 264 fit
  CHECK(form(9, 4096, 132) == "w8a16_gemm_m16_skinny_deep/8 x2");
  CHECK(form(1, 4096, 114) == "w8a16_gemm_m16_skinny_deep/8 x4");    // 228 fit
  CHECK(form(8, 6144, 132) == "w8a16_gemm_m16_skinny_deep/8 x4");    // 384 CTAs, 528 fit
  CHECK(form(9, 6144, 132) == "w8a16_gemm_m16_skinny_deep3/8 x3");   // 264 fit, or 396
  CHECK(form(16, 6144, 114) == "w8a16_gemm_m16_skinny_deep/4 x5");   // 342 fit, or 570
  CHECK(form(1, 10240, 132) == "w8a16_gemm_m16_skinny_deep/4 x8");   // 640 CTAs, 1056 fit
  CHECK(form(16, 10240, 132) == "w8a16_gemm_m16_skinny_deep/4 x5");  // 660 fit
  CHECK(form(16, 12288, 132) == "w8a16_gemm_m16_skinny_deep3/4 x6"); // 768 CTAs: 660, or 792
  CHECK(form(1, 24576, 132) == "w8a16_gemm_m16_skinny_deep/2 x16");  // 1536 CTAs, 2112 fit
  CHECK(form(16, 24576, 132) == "w8a16_gemm_m16_skinny_deep3/2 x12"); // 1320, or 1584
  CHECK(form(16, 16384, 132) == "w8a16_gemm_m16_skinny_deep/2 x10");  // 1024 CTAs, 1320 fit
  CHECK(form(1, 65536, 132) == "w8a16_gemm_m16_skinny_deep/4 x8");    // none fits at once
  // One chunk of K: ceil(K blocks / warps), at least 1.
  CHECK(w8a16_gemm_m16_skinny_deep_one_chunk_blocks(4096, 16) == 2);
  CHECK(w8a16_gemm_m16_skinny_deep_one_chunk_blocks(14336, 16) == 7);
  CHECK(w8a16_gemm_m16_skinny_deep_one_chunk_blocks(1536, 4) == 3);
  CHECK(w8a16_gemm_m16_skinny_deep_one_chunk_blocks(0, 4) == 1);

  struct Want {
    std::uint32_t n, k, warps_m8, warps_m16;
    // The PDL plan keeps the deep entry: its CTAs fit at once and fill two thirds of the
    // slots, above 8 tokens 90 % with CTAs of 2 warps (o, down: 256 of 264; qkv 384 of
    // 528, and above 8 tokens of the three-per-SM form's 396; Qwen3-32B qkv 640 of 660, not
    // of 1056; q_b 1536 of 2112, and of the three-per-SM form's 1584; 8192 x 2048 512 of 528
    // and of 660).
    bool pdl_m8, pdl_m16;
    bool deep3_m16 = false;  // above 8 tokens the three-per-SM form
  };
  // Llama-3-8B o, qkv and down, Qwen3-32B qkv, DeepSeek-V3 q_b, and 16 MiB at K = 2048.
  for (const Want& w :
       {Want{4096, 4096, 16, 8, true, true}, Want{6144, 4096, 8, 8, true, true, true},
        Want{4096, 14336, 16, 8, true, true}, Want{10240, 5120, 4, 4, false, true},
        Want{24576, 1536, 2, 2, true, true, true}, Want{8192, 2048, 8, 4, true, true}}) {
    for (std::uint32_t m = 1; m <= 16; ++m) {
      CAPTURE(w.n);
      CAPTURE(m);
      const std::uint32_t warps = m <= 8 ? w.warps_m8 : w.warps_m16;
      const std::string_view kernel = m > 8 && w.deep3_m16 ? "w8a16_gemm_m16_skinny_deep3"
                                                           : "w8a16_gemm_m16_skinny_deep";
      for (const bool pdl : {false, true}) {
        const M16Plan p = plan_m16_gemm(m, w.n, w.k, 132, M16LaunchOptions{pdl});
        if (pdl && !(m <= 8 ? w.pdl_m8 : w.pdl_m16)) {
          CHECK_FALSE(p.entry.starts_with("w8a16_gemm_m16_skinny_deep"));
          continue;
        }
        CHECK(p.entry == kernel);
        CHECK(p.warps == warps);
        CHECK(p.warp_blocks == (w.k / 128 + warps - 1) / warps);
        CHECK(p.split == 1);
        CHECK(p.ctas == 0);
        // One chunk: no workspace.
        CHECK(w8a16_gemm_m16_skinny_workspace_bytes(w.n, w.k, p.warps, p.warp_blocks) == 0);
      }
    }
  }
  // Not where its CTAs fill under half of the device's slots: 2048 x 8192 up to 8 tokens
  // (128 CTAs of 16 warps, 264 slots); above, 128 of 132.
  for (std::uint32_t m = 1; m <= 16; ++m) {
    CAPTURE(m);
    const M16Plan p = plan_m16_gemm(m, 2048, 8192, 132);
    CHECK((p.entry == "w8a16_gemm_m16_skinny_deep") == (m > 8));
    if (m <= 8) CHECK(p.entry == "w8a16_gemm_m16_skinny");
  }
  // Not under 16 MiB, from 64 MiB, or with K under 1536.
  for (const std::uint32_t m : {1u, 8u, 16u}) {
    CHECK(plan_m16_gemm(m, 1536, 7168, 132).entry == "w8a16_gemm_m16_skinny");
    CHECK(plan_m16_gemm(m, 28672, 4096, 132).entry == "w8a16_gemm_m16_streamk");
    CHECK(plan_m16_gemm(m, 4096, 16384, 132).entry == "w8a16_gemm_m16_streamk");
    CHECK(plan_m16_gemm(m, 16384, 1024, 132).entry == "w8a16_gemm_m16_skinny");
  }
}

TEST_CASE("plan_m16_gemm with PDL: split-K for the seed's entries, stream-K on its grid") {
  const M16LaunchOptions pdl{true};
  // Every shape of the default set, m 1..16: the PDL plan differs from the plain one only
  // where that one picks a tiled entry from 16 MiB at 4 to 8 tokens (stream-K on one CTA
  // per SM instead) or an entry that takes no launch options.
  for (const auto& [n, k] : {std::pair{6144u, 4096u}, {4096u, 4096u}, {28672u, 4096u},
                            {4096u, 14336u}, {10240u, 5120u}, {51200u, 5120u},
                            {5120u, 25600u}, {1536u, 7168u}, {576u, 7168u}, {24576u, 1536u},
                            {7168u, 16384u}, {36864u, 7168u}, {7168u, 18432u}, {12288u, 2048u},
                            {7168u, 4096u}}) {
    for (std::uint32_t m = 1; m <= 16; ++m) {
      CAPTURE(n);
      CAPTURE(k);
      CAPTURE(m);
      const M16Plan plain = plan_m16_gemm(m, n, k, 132);
      const M16Plan p = plan_m16_gemm(m, n, k, 132, pdl);
      // The skinny entries' own PDL bounds are their cases; the layers the plain plan gives
      // them and the PDL plan does not are named below.
      if (plain.entry.starts_with("w8a16_gemm_m16_skinny")) continue;
      const bool tiled = plain.entry == "w8a16_gemm_m16" || plain.entry == "w8a16_gemm_m16_n64" ||
                         plain.entry == "w8a16_gemm_m16_splitk";
      if (tiled && std::uint64_t{n} * k >= (std::uint64_t{16} << 20) && m >= 4 && m <= 8) {
        CHECK(p.entry == "w8a16_gemm_m16_streamk");
        CHECK(p.ctas == 132u);
      } else if (plain.entry == "w8a16_gemm_m16" || plain.entry == "w8a16_gemm_m16_n64") {
        CHECK(p.entry == "w8a16_gemm_m16_splitk");
        CHECK(p.split == 1);
        CHECK(p.ctas == 0);
      } else {
        CHECK(p.entry == plain.entry);
        CHECK(p.split == plain.split);
        CHECK(p.ctas == plain.ctas);
        CHECK(p.stages == plain.stages);
      }
    }
  }
  // Named cases: Qwen3-32B qkv and DeepSeek-V3 q_b at m = 1, DeepSeek-V3 o at m = 1, and
  // the device's SM count.
  CHECK(plan_m16_gemm(1, 10240, 5120, 132, pdl).entry == "w8a16_gemm_m16_splitk");
  CHECK(plan_m16_gemm(1, 24576, 1536, 132, pdl).split == 1);
  CHECK(plan_m16_gemm(1, 7168, 16384, 132, pdl).ctas == 264u);
  CHECK(plan_m16_gemm(1, 7168, 16384, 114, pdl).ctas == 228u);
  CHECK(plan_m16_gemm(1, 4096, 14336, 132, pdl).entry == "w8a16_gemm_m16_skinny_deep");
  // Where the plain plan is a skinny entry and the PDL plan is not: a 16 MiB layer with
  // K = 1024 (the seed's grid as split-K / 1 at 1 token, stream-K from 4). Above 8 tokens
  // 12288 x 2048 takes the three-per-SM form with and without PDL (768 CTAs of 4 warps in
  // its 792 slots; the first form's 660 do not hold them).
  CHECK(plan_m16_gemm(1, 16384, 1024, 132, pdl).entry == "w8a16_gemm_m16_splitk");
  CHECK(plan_m16_gemm(1, 16384, 1024, 132, pdl).split == 1);
  CHECK(plan_m16_gemm(6, 16384, 1024, 132, pdl).entry == "w8a16_gemm_m16_streamk");
  CHECK(plan_m16_gemm(9, 12288, 2048, 132).entry == "w8a16_gemm_m16_skinny_deep3");
  CHECK(plan_m16_gemm(9, 12288, 2048, 132, pdl).entry == "w8a16_gemm_m16_skinny_deep3");
  CHECK(plan_m16_gemm(9, 12288, 2048, 132, pdl).warps == 4);
  CHECK(plan_m16_gemm(1, 1536, 7168, 132, pdl).entry == "w8a16_gemm_m16_skinny");
  CHECK(plan_m16_gemm(1, 1536, 7168, 132, M16LaunchOptions{}).entry ==
        plan_m16_gemm(1, 1536, 7168, 132).entry);
  // The skinny entry's chunks as one cluster: with PDL only, where all its CTAs fit at
  // once. kv_a: 36 groups x 7 chunks = 252 CTAs against 528 slots up to 8 tokens (56
  // registers, 4 CTAs of 8 warps per SM) and 396 above (72, 3); q_a: 672 CTAs.
  CHECK(w8a16_gemm_m16_skinny_ctas_per_sm(8, 8) == 4);
  CHECK(w8a16_gemm_m16_skinny_ctas_per_sm(9, 8) == 3);
  for (const std::uint32_t m : {1u, 8u, 9u, 16u}) {
    CAPTURE(m);
    CHECK(plan_m16_gemm(m, 576, 7168, 132, pdl).chunk_cluster);
    CHECK_FALSE(plan_m16_gemm(m, 576, 7168, 132).chunk_cluster);
    CHECK_FALSE(plan_m16_gemm(m, 1536, 7168, 132, pdl).chunk_cluster);
    CHECK(plan_m16_gemm(m, 1536, 7168, 132, pdl).entry == "w8a16_gemm_m16_skinny");
  }
  // On 64 SMs kv_a's 252 CTAs fit at once up to 8 tokens (256 slots), not above (192);
  // one chunk (K = 1024) leaves nothing to hand off.
  CHECK(plan_m16_gemm(1, 576, 7168, 64, pdl).chunk_cluster);
  CHECK_FALSE(plan_m16_gemm(16, 576, 7168, 64, pdl).chunk_cluster);
  CHECK_FALSE(plan_m16_gemm(1, 576, 1024, 132, pdl).chunk_cluster);
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
