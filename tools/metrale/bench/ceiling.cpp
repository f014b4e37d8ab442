#include "metrale/bench/ceiling.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <string>
#include <vector>

#include "metrale/bench/bench_module.hpp"
#include "metrale/error.hpp"
#include "metrale/kernel_launch.hpp"

namespace metrale::bench {
namespace {

// 1 GiB per launch, far beyond any L2, and several launches per replay so the launch
// gap is a small share of the time.
constexpr std::uint64_t kBytesPerLaunch = std::uint64_t{1} << 30;
constexpr std::uint32_t kLaunchesPerReplay = 4;
constexpr std::uint32_t kThreads = 256;
// 4 CTAs x 256 threads x 8 loads x 16 bytes = 128 KiB in flight per SM, twice what the
// H200 needs; more CTAs only add tail effects.
constexpr std::uint32_t kCtasPerSm = 4;
// Replays of warm-up by wall time. The ceiling is measured after the start-up compiles,
// with the GPU idle for seconds: warmed by one replay only, its replays still sped up by
// 3-6 % from the first to the seventh in every recorded run, so the ceiling read low
// (docs/performance.md, item 177). The size ceilings, after it, are warmed less.
constexpr double kCeilingWarmMs = 500.0;
constexpr double kSizeCeilingWarmMs = 100.0;

// `bytes` of data (every page touched once, so no timed read pays for mapping) and a
// zeroed sink word. The memsets run on the legacy stream, which the non-blocking
// benchmark stream does not wait for: hence the synchronize.
struct ReadBuffers {
  DeviceBuffer data;
  DeviceBuffer sink;
  ReadBuffers(const CudaBackend& gpu, std::uint64_t bytes)
      : data(gpu, bytes), sink(gpu, sizeof(std::uint32_t)) {
    gpu.fill_bytes(data.get(), 0x5A, bytes);
    gpu.fill_bytes(sink.get(), 0, sizeof(std::uint32_t));
    gpu.synchronize();
  }
};

// One layer of n x k bytes in as many copies as 1 GiB takes, for the pattern ceilings: a
// launch per copy never finds its bytes in L2 from the launch before.
struct LayerCopies {
  std::uint64_t layer;
  std::uint64_t copies;
  ReadBuffers buffers;
  LayerCopies(const CudaBackend& gpu, std::uint32_t n, std::uint32_t k)
      : layer(std::uint64_t{n} * k),
        copies((kBytesPerLaunch + layer - 1) / layer),
        buffers(gpu, copies * layer) {}
  DevicePtr copy(std::uint64_t i) const { return buffers.data.get() + i * layer; }
};

// read_ceiling over `bytes` per launch: `launches` launches per replay, launch i on copy
// i % copies of the data.
Ceiling time_read_ceiling_kernel(const CudaBackend& gpu, const Stream& stream,
                                 std::uint32_t replays, std::uint64_t bytes,
                                 std::uint32_t copies, std::uint32_t launches, double warm_ms) {
  ensure(bytes >= 16 && bytes % 16 == 0 && bytes / 16 <= 0xFFFFFFFFull,
         "read ceiling: {} bytes per launch is not a multiple of 16 in 16 B..64 GiB", bytes);
  BenchModule module(gpu, "read_ceiling.cu");
  const KernelHandle kernel = module.kernel("read_ceiling");
  const ReadBuffers buffers(gpu, copies * bytes);

  Ceiling c;
  c.bytes_per_launch = bytes;
  c.block = kThreads;
  c.grid = static_cast<std::uint32_t>(gpu.info().sm_count) * kCtasPerSm;
  c.compile_ms = module.compile_ms();
  const auto words = static_cast<std::uint32_t>(bytes / 16);
  c.timing = time_graph(stream, launches, replays, [&](std::uint32_t i) {
    KernelLaunch(gpu, kernel)
        .grid({c.grid, 1, 1})
        .block({c.block, 1, 1})
        .arg_ptr(buffers.data.get() + (i % copies) * bytes)
        .arg_u32(words)
        .arg_ptr(buffers.sink.get())
        .launch(stream.handle());
  }, warm_ms);
  c.gbps = gbps(bytes, c.timing.median_us);
  c.gbps_best = gbps(bytes, c.timing.min_us);
  c.gbps_worst = gbps(bytes, c.timing.max_us);
  return c;
}

}  // namespace

Ceiling measure_read_ceiling(const CudaBackend& gpu, const Stream& stream,
                             std::uint32_t replays) {
  return time_read_ceiling_kernel(gpu, stream, replays, kBytesPerLaunch, 1, kLaunchesPerReplay,
                                  kCeilingWarmMs);
}

Ceiling measure_size_ceiling(const CudaBackend& gpu, const Stream& stream, std::uint32_t replays,
                             std::uint64_t bytes, std::uint64_t min_bytes) {
  ensure(bytes > 0, "size ceiling: 0 bytes per launch");
  const std::uint64_t count = std::max<std::uint64_t>(1, (min_bytes + bytes - 1) / bytes);
  ensure(count <= std::numeric_limits<std::uint32_t>::max(),
         "size ceiling: {} copies of {} bytes: lower --min-bytes", count, bytes);
  const auto copies = static_cast<std::uint32_t>(count);
  return time_read_ceiling_kernel(gpu, stream, replays, bytes, copies, copies,
                                  kSizeCeilingWarmMs);
}

GraphGaps measure_graph_gaps(const CudaBackend& gpu, const Stream& stream, std::uint32_t replays) {
  BenchModule module(gpu, "empty_launch.cu");
  const KernelHandle kernel = module.kernel("empty_launch_no_args");
  constexpr std::uint32_t kLaunches = 64;
  // grid / cluster CTAs along x, the cluster along y, as the split-K entry launches.
  const auto gap = [&](std::uint32_t grid, std::uint32_t block, std::uint32_t cluster) {
    return time_graph(stream, kLaunches, replays, [&](std::uint32_t) {
      KernelLaunch launch(gpu, kernel);
      launch.grid({grid / cluster, cluster, 1}).block({block, 1, 1});
      if (cluster > 1) launch.cluster({1, cluster, 1});
      launch.launch(stream.handle());
    });
  };
  GraphGaps g;
  g.one_cta = gap(1, 32, 1);
  g.full = gap(2 * static_cast<std::uint32_t>(gpu.info().sm_count), 256, 1);
  g.clusters = gap(144, 128, 8);
  return g;
}

PatternCeiling measure_pattern_ceiling(const CudaBackend& gpu, const Stream& stream,
                                       std::uint32_t replays, std::uint32_t n, std::uint32_t k,
                                       std::uint32_t chunk, std::uint32_t ctas_per_sm) {
  if (chunk == kPackedChunk) {
    ensure(n % 128 == 0 && k % 128 == 0,
           "pattern ceiling: the packed layout needs N and K multiples of 128 (N={}, K={})", n, k);
  } else {
    ensure(chunk >= 128 && chunk <= 512 && (chunk & (chunk - 1)) == 0 && k % chunk == 0,
           "pattern ceiling: chunk {} must be a power of two in 128..512 dividing K={}", chunk, k);
  }
  BenchModule module(gpu, "read_pattern.cu");
  const KernelHandle kernel = module.kernel("read_pattern");
  const LayerCopies data(gpu, n, k);

  PatternCeiling c;
  c.n = n;
  c.k = k;
  c.chunk = chunk;
  c.ctas = static_cast<std::uint32_t>(gpu.info().sm_count) * ctas_per_sm;
  c.timing = time_graph(stream, static_cast<std::uint32_t>(data.copies), replays,
                        [&](std::uint32_t i) {
    KernelLaunch(gpu, kernel)
        .grid({c.ctas, 1, 1})
        .block({kThreads, 1, 1})
        .arg_ptr(data.copy(i))
        .arg_u32(n)
        .arg_u32(k)
        .arg_u32(chunk)
        .arg_ptr(data.buffers.sink.get())
        .launch(stream.handle());
  });
  c.gbps = gbps(data.layer, c.timing.median_us);
  return c;
}

TmaBox parse_tma_box(std::string_view text) {
  TmaBox b;
  std::uint32_t* fields[3] = {&b.rows, &b.bytes, &b.stages};
  std::string_view rest = text;
  bool ok = true;
  for (std::uint32_t i = 0; i < 3 && ok; ++i) {
    const std::size_t x = i < 2 ? rest.find_first_of("xX") : rest.size();
    const std::string_view part = rest.substr(0, x);
    auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), *fields[i]);
    ok = x != std::string_view::npos && !part.empty() && ec == std::errc() &&
         ptr == part.data() + part.size();
    if (ok && i < 2) rest = rest.substr(x + 1);
  }
  ensure(ok, "--tma-pattern '{}': expected ROWSxBYTESxSTAGES, e.g. 128x256x6", text);
  ensure(b.rows >= 8 && b.rows <= 256,
         "--tma-pattern '{}': {} rows per box is outside 8..256", text, b.rows);
  ensure(b.bytes >= 16 && b.bytes <= 512 && (b.bytes & (b.bytes - 1)) == 0,
         "--tma-pattern '{}': {} bytes per row is not a power of two in 16..512", text, b.bytes);
  ensure(b.stages >= 1 && b.stages <= 12,
         "--tma-pattern '{}': {} stages is outside 1..12", text, b.stages);
  return b;
}

TmaPatternCeiling measure_tma_pattern_ceiling(const CudaBackend& gpu, const Stream& stream,
                                              std::uint32_t replays, std::uint32_t n,
                                              std::uint32_t k, TmaBox box,
                                              std::uint32_t ctas_per_sm,
                                              std::uint32_t claims_per_cta) {
  ensure(k % box.bytes == 0, "tma pattern: {} bytes per box row do not divide K={}", box.bytes, k);
  // Every CTA resident at once, as in stream-K: the SM's 228 KiB, 1 KiB per CTA reserved.
  const std::uint64_t ring = 128 + std::uint64_t{box.stages} * box.rows * box.bytes;
  ensure((ring + 1024) * ctas_per_sm <= 233472,
         "tma pattern: {} CTAs per SM of {} stages of {} x {} bytes exceed an SM's shared memory",
         ctas_per_sm, box.stages, box.rows, box.bytes);
  BenchModule module(gpu, "read_pattern_tma.cu");
  const KernelHandle kernel = module.kernel("read_pattern_tma");
  const LayerCopies data(gpu, n, k);
  // Boxes over 256 bytes per row take 16-bit elements: a box has at most 256 per side.
  const std::uint32_t element_bytes = box.bytes > 256 ? 2 : 1;
  std::vector<TensorMapBytes> maps;
  for (std::uint64_t i = 0; i < data.copies; ++i) {
    maps.push_back(gpu.tensor_map_2d({data.copy(i), element_bytes,
                                      k / element_bytes, n, k, box.bytes / element_bytes,
                                      box.rows}));
  }

  TmaPatternCeiling c;
  c.n = n;
  c.k = k;
  c.box = box;
  c.ctas = static_cast<std::uint32_t>(gpu.info().sm_count) * ctas_per_sm;
  c.claims_per_cta = claims_per_cta;
  const DeviceBuffer counters(gpu, 2 * sizeof(std::uint32_t));
  gpu.fill_bytes(counters.get(), 0, 2 * sizeof(std::uint32_t));
  gpu.synchronize();
  c.timing = time_graph(stream, static_cast<std::uint32_t>(data.copies), replays,
                        [&](std::uint32_t i) {
    KernelLaunch(gpu, kernel)
        .grid({c.ctas, 1, 1})
        .block({32, 1, 1})
        .shared_bytes(static_cast<std::uint32_t>(ring))
        .arg_u32(n)
        .arg_u32(k)
        .arg_u32(box.rows)
        .arg_u32(box.bytes)
        .arg_u32(element_bytes)
        .arg_u32(box.stages)
        .arg_u32(claims_per_cta * c.ctas)
        .arg_ptr(counters.get())
        .arg_ptr(data.buffers.sink.get())
        .arg_bytes(&maps[i], sizeof(maps[i]))
        .launch(stream.handle());
  });
  c.gbps = gbps(data.layer, c.timing.median_us);
  return c;
}

}  // namespace metrale::bench
