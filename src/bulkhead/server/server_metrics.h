// ServerMetrics: the job server's figures on /metrics and StatsD (rendered by
// view/metrics_gauges.h) and the job runtime histogram, and the publication of the snapshots the
// figures read off the loop are taken from — the engine's, and the dispatcher's for the per-host
// gauges (view/delivery_gauges.h). Figures that describe state come from the engine, never from
// workers, so they stay true when every worker is stuck.
//
// The rule for figures that cross threads (view/fresh_figures.h): the event loop publishes, a
// collection never waits for the loop. A /metrics scrape renders once Publish() says it is done
// (that scrape shows the figures of that moment); PublishEvery() publishes every
// kPublishInterval for a reader off the loop on its own schedule (the StatsD emitter's thread).
// A collection reads only the latest published copies, so it answers at once — with figures at
// most one publication old or, once they are older than kMaxSnapshotAge (the loop is stuck),
// without them: missing and counted in bulkhead_metrics_collect_errors_total, never frozen.
//
// Thread-compatible; lives on the event loop's thread except for the registry's callbacks.
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <memory>

#include "bulkhead/dispatch/dispatcher.h"
#include "bulkhead/engine/engine.h"
#include "bulkhead/metrics/registry.h"
#include "bulkhead/metrics/top_n_labels.h"
#include "bulkhead/util/published.h"
#include "bulkhead/util/status.h"
#include "bulkhead/util/timer.h"

namespace bulkhead {

class ServerMetrics {
 public:
  // Period of PublishEvery's publication.
  static constexpr std::chrono::seconds kPublishInterval{1};
  // Age past which published figures are left out of a collection: a few periods, so a loop that
  // is only busy for a moment loses none.
  static constexpr std::chrono::seconds kMaxSnapshotAge{3};

  // `registry`, `io`, `engine` and `clock` (every time and timer) must outlive this object;
  // `dispatcher` (null: none) must outlive the publication (Stop() before destroying it).
  // Registers the engine's job-done handler for the runtime histogram.
  ServerMetrics(Registry& registry, boost::asio::io_context& io, Engine& engine,
                Dispatcher* dispatcher, const Clock& clock);
  ~ServerMetrics();
  ServerMetrics(const ServerMetrics&) = delete;
  ServerMetrics& operator=(const ServerMetrics&) = delete;

  // Registers the engine's figures and the runtime histogram, and publishes the first snapshots.
  // Call on the loop's thread, or before the loop runs. Errors: the registry's.
  Status Register();
  // On the loop: publishes the dispatcher's figures now and the engine's once the store answers
  // (now or on a later turn of the loop), then runs `published` (when given) on the loop, also
  // when the engine's figures could not be taken (the last published ones stay). `published`
  // is dropped, not run, when this object is destroyed first.
  void Publish(std::function<void()> published = nullptr);
  // Publishes every kPublishInterval (by the clock) until Stop(): needed when something collects
  // off the loop on its own schedule (the StatsD emitter). Call on the loop's thread, or before
  // the loop runs.
  void PublishEvery();
  // Stops the periodic publication; the published figures stay readable.
  void Stop();

 private:
  Registry& registry_;
  Engine& engine_;
  Dispatcher* const dispatcher_;
  const Clock& clock_;
  TopNLabels jobtypes_;
  HistogramFamily* runtime_ = nullptr;
  // The runtime histogram of the last job type observed: most jobs follow one of their own type,
  // and finding the child by its labels (a vector of strings, a lock, a map) costs more than the
  // observation. A family's children are never removed, so the pointer stays valid.
  std::string last_runtime_label_;
  Histogram* last_runtime_ = nullptr;
  Published<EngineSnapshot> published_;
  Timer timer_;
  bool stopped_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // answers after ~ are dropped
};

}  // namespace bulkhead
