#include "bulkhead/server/server_metrics.h"

#include <spdlog/spdlog.h>

#include "bulkhead/metrics/metric_names.h"
#include "bulkhead/view/metrics_gauges.h"

namespace bulkhead {

namespace mn = metric_names;

ServerMetrics::ServerMetrics(Registry& registry, boost::asio::io_context& io, Engine& engine,
                             const Clock& clock)
    : registry_(registry),
      engine_(engine),
      clock_(clock),
      jobtypes_(clock, TopNLabelsOptions{.top_n = 50}),
      timer_(io) {}

ServerMetrics::~ServerMetrics() {
  Stop();
  engine_.SetJobDoneHandler(nullptr);
  UnregisterEngineMetrics(registry_);  // before published_ goes: no callback reads it afterwards
}

Status ServerMetrics::Register() {
  Status s = RegisterEngineMetrics(registry_, published_, clock_, kMaxSnapshotAge);
  if (!s.ok()) return s;
  auto runtime = registry_.AddHistogram(mn::kJobRuntimeSeconds, mn::kJobRuntimeSecondsHelp,
                                        {std::string(mn::kLabelJobType)}, mn::kJobRuntimeBuckets);
  if (!runtime.ok()) return runtime.status();
  runtime_ = *runtime;
  engine_.SetJobDoneHandler([this](const JobRecord& job, Duration runtime, bool) {
    runtime_->WithLabels({jobtypes_.RecordAndLabel(job.jobtype)})
        .Observe(std::chrono::duration<double>(runtime).count());
  });
  Publish();
  PublishEvery();
  return Status::Ok();
}

void ServerMetrics::Publish() {
  engine_.Snapshot([this](Result<EngineSnapshot> snapshot) {
    if (!snapshot.ok()) {
      spdlog::debug("metrics: engine snapshot not published: {}", snapshot.status().message());
      return;  // the last published figures stay
    }
    published_.Publish(std::move(*snapshot));
  });
}

void ServerMetrics::PublishEvery() {
  timer_.expires_after(kPublishInterval);
  timer_.async_wait([this](boost::system::error_code ec) {
    if (ec || stopped_) return;
    Publish();
    PublishEvery();
  });
}

void ServerMetrics::Stop() {
  stopped_ = true;
  timer_.cancel();
}

}  // namespace bulkhead
