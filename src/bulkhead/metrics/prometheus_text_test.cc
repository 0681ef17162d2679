#include "bulkhead/metrics/prometheus_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "bulkhead/metrics/metric_names.h"

namespace bulkhead {
namespace {

namespace mn = metric_names;

TEST(PrometheusTextTest, ContentTypeIsVersion004) {
  EXPECT_EQ(kPrometheusTextContentType, "text/plain; version=0.0.4; charset=utf-8");
}

TEST(PrometheusTextTest, FormatsValues) {
  EXPECT_EQ(FormatPrometheusValue(0), "0");
  EXPECT_EQ(FormatPrometheusValue(-0.0), "0");
  EXPECT_EQ(FormatPrometheusValue(42), "42");
  EXPECT_EQ(FormatPrometheusValue(-3), "-3");
  EXPECT_EQ(FormatPrometheusValue(0.25), "0.25");
  EXPECT_EQ(FormatPrometheusValue(0.005), "0.005");
  EXPECT_EQ(FormatPrometheusValue(1e-9), "1e-09");
  EXPECT_EQ(FormatPrometheusValue(1700000000.5), "1700000000.5");
  EXPECT_EQ(FormatPrometheusValue(1e300), "1e+300");
  EXPECT_EQ(FormatPrometheusValue(std::nan("")), "NaN");
  EXPECT_EQ(FormatPrometheusValue(INFINITY), "+Inf");
  EXPECT_EQ(FormatPrometheusValue(-INFINITY), "-Inf");
}

TEST(PrometheusTextTest, EscapesLabelValuesAndHelp) {
  EXPECT_EQ(EscapeLabelValue(R"(a\b"c)"
                             "\nd"),
            R"(a\\b\"c\nd)");
  // HELP escapes only backslash and newline; a quote stays as is.
  EXPECT_EQ(EscapeHelp(R"(say "hi" \ )"
                       "\nbye"),
            R"(say "hi" \\ \nbye)");
}

TEST(PrometheusTextTest, RendersASmallRegistryExactly) {
  Registry registry;
  CounterFamily* processed = *registry.AddCounter(mn::kJobsProcessedTotal, "Jobs acked.");
  processed->Get().Increment(3);
  GaugeFamily* size = *registry.AddGauge(mn::kQueueSize, "Jobs waiting.", {"queue"});
  size->WithLabels({"push"}).Set(12);
  size->WithLabels({"default"}).Set(0);
  CounterFamily* deliveries =
      *registry.AddCounter(mn::kDeliveriesTotal, "Delivery attempts.", {"host", "outcome"});
  deliveries->WithLabels({"weird\"host\\\n", "success"}).Increment();
  const double bounds[] = {0.1, 1};
  HistogramFamily* runtime = *registry.AddHistogram(
      mn::kJobRuntimeSeconds, "Fetch to ack.\nMultiline \\ help.", {"jobtype"}, bounds);
  runtime->WithLabels({"Deliver"}).Observe(0.05);
  runtime->WithLabels({"Deliver"}).Observe(0.5);
  runtime->WithLabels({"Deliver"}).Observe(4);
  ASSERT_TRUE(registry
                  .AddCallbackGauge(mn::kQueueLatencySeconds, "Oldest job age.", {"queue"},
                                    []() -> Result<std::vector<MetricSample>> {
                                      return std::vector<MetricSample>{{{"push"}, 61.5}};
                                    })
                  .ok());

  EXPECT_EQ(RenderPrometheusText(registry),
            "# HELP bulkhead_deliveries_total Delivery attempts.\n"
            "# TYPE bulkhead_deliveries_total counter\n"
            "bulkhead_deliveries_total{host=\"weird\\\"host\\\\\\n\",outcome=\"success\"} 1\n"
            "# HELP bulkhead_job_runtime_seconds Fetch to ack.\\nMultiline \\\\ help.\n"
            "# TYPE bulkhead_job_runtime_seconds histogram\n"
            "bulkhead_job_runtime_seconds_bucket{jobtype=\"Deliver\",le=\"0.1\"} 1\n"
            "bulkhead_job_runtime_seconds_bucket{jobtype=\"Deliver\",le=\"1\"} 2\n"
            "bulkhead_job_runtime_seconds_bucket{jobtype=\"Deliver\",le=\"+Inf\"} 3\n"
            "bulkhead_job_runtime_seconds_sum{jobtype=\"Deliver\"} 4.55\n"
            "bulkhead_job_runtime_seconds_count{jobtype=\"Deliver\"} 3\n"
            "# HELP bulkhead_jobs_processed_total Jobs acked.\n"
            "# TYPE bulkhead_jobs_processed_total counter\n"
            "bulkhead_jobs_processed_total 3\n"
            "# HELP bulkhead_queue_latency_seconds Oldest job age.\n"
            "# TYPE bulkhead_queue_latency_seconds gauge\n"
            "bulkhead_queue_latency_seconds{queue=\"push\"} 61.5\n"
            "# HELP bulkhead_queue_size Jobs waiting.\n"
            "# TYPE bulkhead_queue_size gauge\n"
            "bulkhead_queue_size{queue=\"default\"} 0\n"
            "bulkhead_queue_size{queue=\"push\"} 12\n");
}

TEST(PrometheusTextTest, UnlabelledHistogramHasOnlyLe) {
  Registry registry;
  const double bounds[] = {1};
  (*registry.AddHistogram("h_seconds", "H.", {}, bounds))->Get().Observe(2);
  EXPECT_EQ(RenderPrometheusText(registry),
            "# HELP h_seconds H.\n"
            "# TYPE h_seconds histogram\n"
            "h_seconds_bucket{le=\"1\"} 0\n"
            "h_seconds_bucket{le=\"+Inf\"} 1\n"
            "h_seconds_sum 2\n"
            "h_seconds_count 1\n");
}

// Builds a registry with every bulkhead metric (names from metric_names.h) and compares its
// rendering with testdata/example.prom, which deploy/test also lints with `promtool check
// metrics`: the exposition the server will produce passes Prometheus's own linter.
std::unique_ptr<Registry> ExampleRegistry() {
  auto r = std::make_unique<Registry>();
  {
    auto gauge = [&r](std::string_view name, std::string_view help, std::vector<std::string> labels,
                      std::vector<MetricSample> samples) {
      EXPECT_TRUE(
          r->AddCallbackGauge(name, help, std::move(labels),
                              [samples]() -> Result<std::vector<MetricSample>> { return samples; })
              .ok());
    };
    std::string q(mn::kLabelQueue), h(mn::kLabelHost);
    gauge(mn::kQueueSize, mn::kQueueSizeHelp, {q}, {{{"default"}, 2}, {{"push"}, 340}});
    gauge(mn::kQueueLatencySeconds, mn::kQueueLatencySecondsHelp, {q},
          {{{"default"}, 0.25}, {{"push"}, 61.5}});
    gauge(mn::kRetrySetSize, mn::kRetrySetSizeHelp, {}, {{{}, 3100}});
    gauge(mn::kScheduledSetSize, mn::kScheduledSetSizeHelp, {}, {{{}, 5}});
    gauge(mn::kDeadSetSize, mn::kDeadSetSizeHelp, {}, {{{}, 17}});
    gauge(mn::kParkedJobs, mn::kParkedJobsHelp, {}, {{{}, 40}});
    gauge(mn::kWorkingJobs, mn::kWorkingJobsHelp, {}, {{{}, 25}});
    gauge(mn::kOldestWorkingJobSeconds, mn::kOldestWorkingJobSecondsHelp, {}, {{{}, 129}});
    gauge(mn::kWorkersConnected, mn::kWorkersConnectedHelp, {}, {{{}, 2}});
    gauge(mn::kHostInflight, mn::kHostInflightHelp, {h},
          {{{"mastodon.social"}, 4}, {{"other"}, 9}});
    gauge(mn::kHostCap, mn::kHostCapHelp, {h}, {{{"mastodon.social"}, 8}, {{"other"}, 64}});
    gauge(mn::kHostBreakerOpen, mn::kHostBreakerOpenHelp, {h},
          {{{"mastodon.social"}, 0}, {{"other"}, 1}});
    gauge(mn::kStartTimeSeconds, mn::kStartTimeSecondsHelp, {}, {{{}, 1700000000}});
    gauge(mn::kStoreDegraded, mn::kStoreDegradedHelp, {}, {{{}, 0}});
    (*r->AddGauge(mn::kBuildInfo, mn::kBuildInfoHelp, {std::string(mn::kLabelVersion)}))
        ->WithLabels({"0.1.0"})
        .Set(1);
    (*r->AddCounter(mn::kJobsProcessedTotal, mn::kJobsProcessedTotalHelp))->Get().Increment(1200);
    (*r->AddCounter(mn::kJobsFailedTotal, mn::kJobsFailedTotalHelp))->Get().Increment(31);
    (*r->AddCounter(mn::kPushDuplicatesTotal, mn::kPushDuplicatesTotalHelp))->Get().Increment(2);
    (*r->AddCounter(mn::kLoginFailuresTotal, mn::kLoginFailuresTotalHelp))->Get().Increment(7);
    (*r->AddCounter(mn::kLoginsThrottledTotal, mn::kLoginsThrottledTotalHelp))->Get().Increment(40);
    CounterFamily* shed =
        *r->AddCounter(mn::kConnectionsShedTotal, mn::kConnectionsShedTotalHelp,
                       {std::string(mn::kLabelListener), std::string(mn::kLabelReason)});
    shed->WithLabels({"faktory", "fd_limit"}).Increment(3);
    shed->WithLabels({"http", "evicted"}).Increment(1);
    (*r->AddCounter(mn::kTlsHandshakeFailuresTotal, mn::kTlsHandshakeFailuresTotalHelp,
                    {std::string(mn::kLabelListener)}))
        ->WithLabels({"faktory"})
        .Increment(2);
    CounterFamily* d = *r->AddCounter(mn::kDeliveriesTotal, mn::kDeliveriesTotalHelp,
                                      {h, std::string(mn::kLabelOutcome)});
    d->WithLabels({"mastodon.social", mn::kOutcomeSuccess}).Increment(1000);
    d->WithLabels({"other", mn::kOutcomeTimeout}).Increment(12);
    HistogramFamily* rt =
        *r->AddHistogram(mn::kJobRuntimeSeconds, mn::kJobRuntimeSecondsHelp,
                         {std::string(mn::kLabelJobType)}, mn::kJobRuntimeBuckets);
    rt->WithLabels({"ActivityPub::DeliveryWorker"}).Observe(0.2);
    rt->WithLabels({"ActivityPub::DeliveryWorker"}).Observe(129);
    HistogramFamily* dl =
        *r->AddHistogram(mn::kDeliveryLatencySeconds, mn::kDeliveryLatencySecondsHelp, {h},
                         mn::kDeliveryLatencyBuckets);
    dl->WithLabels({"mastodon.social"}).Observe(0.08);
    (void)r->AddCallbackGauge("bulkhead_broken_gauge", "Always fails.", {},
                              []() -> Result<std::vector<MetricSample>> {
                                return Status::Unavailable("store unreachable");
                              });
  }
  return r;
}

// This file's directory, for running the binary by hand outside ctest.
std::string ThisDir() {
  std::string f = __FILE__;
  return f.substr(0, f.find_last_of('/'));
}

TEST(PrometheusTextTest, ExampleExpositionMatchesGoldenFile) {
  const char* src = std::getenv("BULKHEAD_SOURCE_DIR");
  std::string path = (src != nullptr ? std::string(src) + "/src/bulkhead/metrics" : ThisDir()) +
                     "/testdata/example.prom";
  std::string rendered = RenderPrometheusText(*ExampleRegistry());
  std::ifstream in(path);
  if (std::getenv("BULKHEAD_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path) << rendered;
    GTEST_SKIP() << "rewrote " << path;
  }
  ASSERT_TRUE(in.good()) << "cannot read " << path
                         << " (run with BULKHEAD_UPDATE_GOLDEN=1 to create it)";
  std::stringstream golden;
  golden << in.rdbuf();
  EXPECT_EQ(rendered, golden.str()) << "rerun with BULKHEAD_UPDATE_GOLDEN=1 if intended";
}

}  // namespace
}  // namespace bulkhead
