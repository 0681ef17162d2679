// ServerMetrics: registers the job server's figures (queues, sets, counters, workers, job runtime)
// in a metrics Registry. Figures that describe state are computed at collection time from the
// engine, never pushed by workers, so they stay true when every worker is stuck.
//
// Collection may happen on any thread (the HTTP handler runs on the event loop; the StatsD emitter
// has its own thread): the callbacks run their reads on the event loop, waiting up to 2 s for it.
// A loop that does not answer makes the figure missing from that collection (and counted in
// bulkhead_metrics_collect_errors_total), never stale.
#pragma once

#include <boost/asio/io_context.hpp>
#include <memory>

#include "bulkhead/engine/engine.h"
#include "bulkhead/metrics/registry.h"
#include "bulkhead/metrics/top_n_labels.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

class ServerMetrics {
 public:
  // `registry`, `io` and `engine` must outlive this object. Registers the engine's job-done
  // handler for the runtime histogram.
  ServerMetrics(Registry& registry, boost::asio::io_context& io, Engine& engine,
                const Clock& clock);
  ~ServerMetrics();
  Status Register();

 private:
  Result<StoreStats> StatsOnLoop();

  Registry& registry_;
  boost::asio::io_context& io_;
  Engine& engine_;
  const Clock& clock_;
  TopNLabels jobtypes_;
  HistogramFamily* runtime_ = nullptr;
  TimePoint started_at_;
};

}  // namespace bulkhead
