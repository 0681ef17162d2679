#include "bulkhead/server/server_metrics.h"

#include <boost/asio/post.hpp>
#include <future>

#include "bulkhead/metrics/metric_names.h"

namespace bulkhead {

namespace asio = boost::asio;
namespace mn = metric_names;

namespace {

constexpr auto kLoopWait = std::chrono::seconds(2);

// Runs `fn` on the event loop and returns its result; inline when already on the loop.
template <typename T>
Result<T> OnLoop(asio::io_context& io, std::function<Result<T>()> fn) {
  if (io.get_executor().running_in_this_thread()) return fn();
  auto promise = std::make_shared<std::promise<Result<T>>>();
  auto future = promise->get_future();
  asio::post(io, [promise, fn] { promise->set_value(fn()); });
  if (future.wait_for(kLoopWait) != std::future_status::ready) {
    return Status::Unavailable("the event loop did not answer within 2 s");
  }
  return future.get();
}

using Samples = Result<std::vector<MetricSample>>;

}  // namespace

ServerMetrics::ServerMetrics(Registry& registry, asio::io_context& io, Engine& engine,
                             const Clock& clock)
    : registry_(registry),
      io_(io),
      engine_(engine),
      clock_(clock),
      jobtypes_(clock, TopNLabelsOptions{.top_n = 50}),
      started_at_(clock.Now()) {}

ServerMetrics::~ServerMetrics() {
  engine_.SetJobDoneHandler(nullptr);
  for (auto name :
       {mn::kQueueSize, mn::kQueueLatencySeconds, mn::kRetrySetSize, mn::kScheduledSetSize,
        mn::kDeadSetSize, mn::kWorkingJobs, mn::kWorkersConnected, mn::kJobsProcessedTotal,
        mn::kJobsFailedTotal, mn::kPushDuplicatesTotal, mn::kBuildInfo, mn::kStartTimeSeconds,
        mn::kStoreDegraded}) {
    registry_.RemoveCallback(name);
  }
}

Result<StoreStats> ServerMetrics::StatsOnLoop() {
  return OnLoop<StoreStats>(io_, [this]() -> Result<StoreStats> {
    std::optional<Result<StoreStats>> out;
    engine_.store().Stats([&](Result<StoreStats> s) { out = std::move(s); });
    if (!out) return Status::Unavailable("store statistics are not available synchronously");
    return *out;
  });
}

Status ServerMetrics::Register() {
  auto per_queue = [this](bool latency) {
    return [this, latency]() -> Samples {
      auto stats = StatsOnLoop();
      if (!stats.ok()) return stats.status();
      int64_t now = ToUnixMicros(clock_.Now());
      std::vector<MetricSample> out;
      for (const auto& [name, q] : stats->queues) {
        double v = static_cast<double>(q.size);
        if (latency) {
          v = q.oldest_enqueued_us > 0 ? std::max<int64_t>(0, now - q.oldest_enqueued_us) / 1e6 : 0;
        }
        out.push_back(MetricSample{{name}, v});
      }
      return out;
    };
  };
  auto scalar = [this](std::function<double(const StoreStats&)> pick) {
    return [this, pick]() -> Samples {
      auto stats = StatsOnLoop();
      if (!stats.ok()) return stats.status();
      return std::vector<MetricSample>{MetricSample{{}, pick(*stats)}};
    };
  };
  std::vector<Status> results;
  results.push_back(registry_.AddCallbackGauge(mn::kQueueSize, mn::kQueueSizeHelp,
                                               {std::string(mn::kLabelQueue)}, per_queue(false)));
  results.push_back(registry_.AddCallbackGauge(mn::kQueueLatencySeconds,
                                               mn::kQueueLatencySecondsHelp,
                                               {std::string(mn::kLabelQueue)}, per_queue(true)));
  results.push_back(registry_.AddCallbackGauge(
      mn::kRetrySetSize, mn::kRetrySetSizeHelp, {},
      scalar([](const StoreStats& s) { return static_cast<double>(s.retries); })));
  results.push_back(registry_.AddCallbackGauge(
      mn::kScheduledSetSize, mn::kScheduledSetSizeHelp, {},
      scalar([](const StoreStats& s) { return static_cast<double>(s.scheduled); })));
  results.push_back(registry_.AddCallbackGauge(
      mn::kDeadSetSize, mn::kDeadSetSizeHelp, {},
      scalar([](const StoreStats& s) { return static_cast<double>(s.dead); })));
  results.push_back(registry_.AddCallbackGauge(
      mn::kWorkingJobs, mn::kWorkingJobsHelp, {},
      scalar([](const StoreStats& s) { return static_cast<double>(s.working); })));
  results.push_back(registry_.AddCallback(
      MetricType::kCounter, mn::kJobsProcessedTotal, mn::kJobsProcessedTotalHelp, {},
      scalar([](const StoreStats& s) { return static_cast<double>(s.processed); })));
  results.push_back(registry_.AddCallback(
      MetricType::kCounter, mn::kJobsFailedTotal, mn::kJobsFailedTotalHelp, {},
      scalar([](const StoreStats& s) { return static_cast<double>(s.failures); })));
  results.push_back(registry_.AddCallback(MetricType::kCounter, mn::kPushDuplicatesTotal,
                                          mn::kPushDuplicatesTotalHelp, {}, [this]() -> Samples {
                                            // An atomic: the scrape answers even when the event
                                            // loop is stuck.
                                            double n =
                                                static_cast<double>(engine_.push_duplicates());
                                            return std::vector<MetricSample>{MetricSample{{}, n}};
                                          }));
  results.push_back(registry_.AddCallbackGauge(
      mn::kWorkersConnected, mn::kWorkersConnectedHelp, {}, [this]() -> Samples {
        auto n = OnLoop<double>(io_, [this]() -> Result<double> {
          return static_cast<double>(engine_.workers().size());
        });
        if (!n.ok()) return n.status();
        return std::vector<MetricSample>{MetricSample{{}, *n}};
      }));
  results.push_back(registry_.AddCallbackGauge(
      mn::kBuildInfo, mn::kBuildInfoHelp, {std::string(mn::kLabelVersion)}, []() -> Samples {
        return std::vector<MetricSample>{MetricSample{{BULKHEAD_VERSION}, 1}};
      }));
  results.push_back(registry_.AddCallbackGauge(
      mn::kStoreDegraded, mn::kStoreDegradedHelp, {}, [this]() -> Samples {
        // degraded() is thread-safe: the scrape answers even when the event loop is stuck.
        double v = engine_.store().degraded() ? 1 : 0;
        return std::vector<MetricSample>{MetricSample{{}, v}};
      }));
  double start = ToUnixMicros(started_at_) / 1e6;
  results.push_back(registry_.AddCallbackGauge(
      mn::kStartTimeSeconds, mn::kStartTimeSecondsHelp, {}, [start]() -> Samples {
        return std::vector<MetricSample>{MetricSample{{}, start}};
      }));
  auto runtime = registry_.AddHistogram(mn::kJobRuntimeSeconds, mn::kJobRuntimeSecondsHelp,
                                        {std::string(mn::kLabelJobType)}, mn::kJobRuntimeBuckets);
  if (!runtime.ok()) return runtime.status();
  runtime_ = *runtime;
  for (const Status& s : results) {
    if (!s.ok()) return s;
  }
  engine_.SetJobDoneHandler([this](const JobRecord& job, Duration runtime, bool) {
    runtime_->WithLabels({jobtypes_.RecordAndLabel(job.jobtype)})
        .Observe(std::chrono::duration<double>(runtime).count());
  });
  return Status::Ok();
}

}  // namespace bulkhead
