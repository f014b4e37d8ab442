#include "metrale/bench/graph_timer.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <vector>

#include "driver_api.hpp"
#include "metrale/error.hpp"
#include "metrale/log.hpp"

namespace metrale::bench {

Stream::Stream(const CudaBackend& gpu) {
  gpu.make_current();
  METRALE_CU(cuStreamCreate, &stream_, CU_STREAM_NON_BLOCKING);
}

Stream::~Stream() {
  if (stream_ == nullptr) return;
  const CUresult r = driver::api().cuStreamDestroy(stream_);
  if (r != CUDA_SUCCESS) logger()->error("cuStreamDestroy failed: {}", driver::describe(r));
}

void Stream::synchronize() const { METRALE_CU(cuStreamSynchronize, stream_); }

Event::Event() { METRALE_CU(cuEventCreate, &event_, CU_EVENT_DEFAULT); }

Event::~Event() {
  if (event_ == nullptr) return;
  const CUresult r = driver::api().cuEventDestroy(event_);
  if (r != CUDA_SUCCESS) logger()->error("cuEventDestroy failed: {}", driver::describe(r));
}

void Event::record(const Stream& stream) { METRALE_CU(cuEventRecord, event_, stream.get()); }

float Event::elapsed_ms_since(const Event& start) const {
  METRALE_CU(cuEventSynchronize, event_);
  float ms = 0.0f;
  METRALE_CU(cuEventElapsedTime, &ms, start.event_, event_);
  return ms;
}

Graph::~Graph() {
  if (graph_ == nullptr) return;
  const CUresult r = driver::api().cuGraphDestroy(graph_);
  if (r != CUDA_SUCCESS) logger()->error("cuGraphDestroy failed: {}", driver::describe(r));
}

GraphExec::GraphExec(const Graph& graph) {
  METRALE_CU(cuGraphInstantiateWithFlags, &exec_, graph.get(), 0);
}

GraphExec::~GraphExec() {
  if (exec_ == nullptr) return;
  const CUresult r = driver::api().cuGraphExecDestroy(exec_);
  if (r != CUDA_SUCCESS) logger()->error("cuGraphExecDestroy failed: {}", driver::describe(r));
}

void GraphExec::launch(const Stream& stream) const {
  METRALE_CU(cuGraphLaunch, exec_, stream.get());
}

Graph capture(const Stream& stream, const std::function<void()>& fill) {
  // Thread-local mode: cuBLAS may make capture-safe runtime queries from this thread, and
  // other threads (none today) are not restricted.
  METRALE_CU(cuStreamBeginCapture, stream.get(), CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
  try {
    fill();
  } catch (...) {
    CUgraph partial = nullptr;
    // The capture may already be invalidated; all that matters is leaving capture mode.
    driver::api().cuStreamEndCapture(stream.get(), &partial);
    if (partial != nullptr) driver::api().cuGraphDestroy(partial);
    throw;
  }
  CUgraph graph = nullptr;
  METRALE_CU(cuStreamEndCapture, stream.get(), &graph);
  ensure(graph != nullptr, "cuStreamEndCapture returned no graph");
  return Graph(graph);
}

double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

namespace {

void count_graph(const Graph& graph, Timing& t) {
  std::size_t count = 0;
  METRALE_CU(cuGraphGetNodes, graph.get(), nullptr, &count);
  std::vector<CUgraphNode> nodes(count);
  METRALE_CU(cuGraphGetNodes, graph.get(), nodes.data(), &count);
  for (CUgraphNode node : nodes) {
    CUgraphNodeType type{};
    METRALE_CU(cuGraphNodeGetType, node, &type);
    if (type == CU_GRAPH_NODE_TYPE_KERNEL) ++t.kernel_nodes;
  }
  std::size_t edges = 0;
  METRALE_CU(cuGraphGetEdges, graph.get(), nullptr, nullptr, nullptr, &edges);
  std::vector<CUgraphNode> from(edges);
  std::vector<CUgraphNode> to(edges);
  std::vector<CUgraphEdgeData> data(edges);
  METRALE_CU(cuGraphGetEdges, graph.get(), from.data(), to.data(), data.data(), &edges);
  for (std::size_t i = 0; i < edges; ++i) {
    if (data[i].type == CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC) ++t.programmatic_edges;
  }
}

}  // namespace

Timing time_graph(const Stream& stream, std::uint32_t launches, std::uint32_t replays,
                  const std::function<void(std::uint32_t)>& launch, double warm_ms) {
  ensure(launches >= 1 && replays >= 1, "time_graph: launches={} replays={} must be >= 1",
         launches, replays);
  const Graph graph = capture(stream, [&] {
    for (std::uint32_t i = 0; i < launches; ++i) launch(i);
  });
  const GraphExec exec(graph);
  // The first replay uploads the graph and warms instruction caches and TLBs; more, for
  // `warm_ms`, bring an idle GPU's clocks up to those of a busy one.
  const auto warm_start = std::chrono::steady_clock::now();
  do {
    exec.launch(stream);
    stream.synchronize();
  } while (std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                     warm_start)
               .count() < warm_ms);

  Timing t;
  t.launches = launches;
  count_graph(graph, t);
  // The timed replays are queued back to back behind an untimed one, one event between
  // each two: replay r is what lies between events r and r + 1, all on a busy GPU, as an
  // engine's stream is. Each replay timed alone, from an event on the idle stream, gave the
  // read kernel at each layer's size about 14 us more per replay in the records up to
  // 0eca751, which its R launches shared; the entries' and baselines' times did not move
  // (docs/performance.md, item 179).
  std::deque<Event> marks(replays + 1);
  exec.launch(stream);
  marks[0].record(stream);
  for (std::uint32_t r = 0; r < replays; ++r) {
    exec.launch(stream);
    marks[r + 1].record(stream);
  }
  for (std::uint32_t r = 0; r < replays; ++r) {
    const double ms = marks[r + 1].elapsed_ms_since(marks[r]);
    t.replay_us.push_back(ms * 1000.0 / launches);
  }
  stream.synchronize();
  t.median_us = median(t.replay_us);
  t.min_us = *std::min_element(t.replay_us.begin(), t.replay_us.end());
  t.max_us = *std::max_element(t.replay_us.begin(), t.replay_us.end());
  return t;
}

}  // namespace metrale::bench
