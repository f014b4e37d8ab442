// Timing the way an engine runs decode kernels: a run of launches captured once in a
// CUDA graph and replayed, so the host's launch cost and the gaps between separate
// submissions are not what gets measured. Every driver object is owned by RAII.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "metrale/cuda_backend.hpp"

namespace metrale::bench {

// A non-blocking stream: the legacy default stream cannot be captured.
class Stream {
 public:
  explicit Stream(const CudaBackend& gpu);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  CUstream get() const { return stream_; }
  StreamHandle handle() const { return reinterpret_cast<StreamHandle>(stream_); }
  void synchronize() const;

 private:
  CUstream stream_ = nullptr;
};

class Event {
 public:
  Event();
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(const Stream& stream);
  // Milliseconds from `start` to this event; waits for this event first.
  float elapsed_ms_since(const Event& start) const;

 private:
  CUevent event_ = nullptr;
};

class Graph {
 public:
  explicit Graph(CUgraph g) : graph_(g) {}
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  CUgraph get() const { return graph_; }

 private:
  CUgraph graph_ = nullptr;
};

class GraphExec {
 public:
  explicit GraphExec(const Graph& graph);
  ~GraphExec();
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;
  void launch(const Stream& stream) const;

 private:
  CUgraphExec exec_ = nullptr;
};

// Records everything `fill` enqueues on `stream` into a graph. If `fill` throws, the
// capture is ended and discarded so the stream is usable again.
Graph capture(const Stream& stream, const std::function<void()>& fill);

struct Timing {
  double median_us = 0.0;  // per launch
  double min_us = 0.0;
  double max_us = 0.0;
  std::uint32_t launches = 0;       // launches per replay (the copies rotated through)
  std::vector<double> replay_us;    // per-launch time of each replay, in replay order
  // What the captured graph holds: a library call may add kernels (a second pass) and
  // programmatic edges (launches that overlap the previous kernel's tail).
  std::uint32_t kernel_nodes = 0;
  std::uint32_t programmatic_edges = 0;
};

// Captures launch(0) .. launch(launches-1) into one graph, replays it once to warm up (and
// again until `warm_ms` of wall time have passed), then once more untimed and `replays`
// times back to back behind it, an event between each two; per-launch time = replay /
// launches.
Timing time_graph(const Stream& stream, std::uint32_t launches, std::uint32_t replays,
                  const std::function<void(std::uint32_t)>& launch, double warm_ms = 0.0);

double median(std::vector<double> values);

}  // namespace metrale::bench
