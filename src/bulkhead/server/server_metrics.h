// ServerMetrics: the job server's figures on /metrics and StatsD (rendered by
// view/metrics_gauges.h) and the job runtime histogram. Figures that describe state come from the
// engine, never from workers, so they stay true when every worker is stuck.
//
// The rule for figures that cross threads: the event loop publishes, a collection never waits for
// the loop. The loop publishes an EngineSnapshot every second and whenever Publish() is called
// (the /metrics handler does so, on the loop, before it renders: a scrape over HTTP shows the
// figures of that moment); the metric callbacks read only the latest published copy. So a
// collection on another thread (the StatsD emitter's, or any reader of the registry while the loop
// is stuck in a handler) answers at once, with figures at most one publication old — or, once the
// latest is older than kMaxSnapshotAge (the loop is stuck), without them: missing and counted in
// bulkhead_metrics_collect_errors_total, never frozen.
//
// Thread-compatible; lives on the event loop's thread except for the registry's callbacks.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <memory>

#include "bulkhead/engine/engine.h"
#include "bulkhead/metrics/registry.h"
#include "bulkhead/metrics/top_n_labels.h"
#include "bulkhead/util/status.h"
#include "bulkhead/view/published_snapshot.h"

namespace bulkhead {

class ServerMetrics {
 public:
  // Period of the loop's publication.
  static constexpr std::chrono::seconds kPublishInterval{1};
  // Age past which the published figures are left out of a collection: one period, plus the 2 s
  // a collection used to wait for a busy loop.
  static constexpr std::chrono::seconds kMaxSnapshotAge{3};

  // `registry`, `io`, `engine` and `clock` must outlive this object. Registers the engine's
  // job-done handler for the runtime histogram.
  ServerMetrics(Registry& registry, boost::asio::io_context& io, Engine& engine,
                const Clock& clock);
  ~ServerMetrics();
  ServerMetrics(const ServerMetrics&) = delete;
  ServerMetrics& operator=(const ServerMetrics&) = delete;

  // Registers the figures, publishes the first snapshot and starts the periodic publication.
  // Call on the loop's thread, or before the loop runs. Errors: the registry's.
  Status Register();
  // On the loop: publishes the engine's figures now (at once for the memory and embedded stores,
  // whose statistics answer inline).
  void Publish();
  // Stops the periodic publication; the published figures stay readable.
  void Stop();

  const PublishedSnapshot& published() const { return published_; }

 private:
  void PublishEvery();

  Registry& registry_;
  Engine& engine_;
  const Clock& clock_;
  TopNLabels jobtypes_;
  HistogramFamily* runtime_ = nullptr;
  PublishedSnapshot published_;
  boost::asio::steady_timer timer_;
  bool stopped_ = false;
};

}  // namespace bulkhead
