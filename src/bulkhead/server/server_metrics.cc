#include "bulkhead/server/server_metrics.h"

#include <spdlog/spdlog.h>

#include "bulkhead/metrics/metric_names.h"
#include "bulkhead/view/metrics_gauges.h"

namespace bulkhead {

namespace mn = metric_names;

ServerMetrics::ServerMetrics(Registry& registry, boost::asio::io_context& io, Engine& engine,
                             Dispatcher* dispatcher, const Clock& clock)
    : registry_(registry),
      engine_(engine),
      dispatcher_(dispatcher),
      clock_(clock),
      jobtypes_(clock, TopNLabelsOptions{.top_n = 50}),
      timer_(io, clock) {}

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
    std::string label = jobtypes_.RecordAndLabel(job.jobtype);
    if (last_runtime_ == nullptr || label != last_runtime_label_) {
      last_runtime_ = &runtime_->WithLabels({label});
      last_runtime_label_ = std::move(label);
    }
    last_runtime_->Observe(std::chrono::duration<double>(runtime).count());
  });
  Publish();
  return Status::Ok();
}

void ServerMetrics::Publish(std::function<void()> published) {
  if (dispatcher_ != nullptr) dispatcher_->PublishSnapshot();
  engine_.Snapshot([this, alive = std::weak_ptr<bool>(alive_),
                    published = std::move(published)](Result<EngineSnapshot> snapshot) {
    if (!alive.lock()) return;
    if (snapshot.ok()) {
      published_.Publish(std::move(*snapshot));
    } else {  // the last published figures stay
      spdlog::debug("metrics: engine snapshot not published: {}", snapshot.status().message());
    }
    if (published) published();
  });
}

void ServerMetrics::PublishEvery() {
  if (stopped_) return;
  timer_.ExpiresAfter(kPublishInterval);
  timer_.AsyncWait([this](boost::system::error_code ec) {
    if (ec || stopped_) return;
    Publish();
    PublishEvery();
  });
}

void ServerMetrics::Stop() {
  stopped_ = true;
  timer_.Cancel();
}

}  // namespace bulkhead
