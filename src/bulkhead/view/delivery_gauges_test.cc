#include "bulkhead/view/delivery_gauges.h"

#include <gtest/gtest.h>

#include <map>

#include "bulkhead/metrics/metric_names.h"
#include "bulkhead/metrics/prometheus_text.h"
#include "bulkhead/metrics/testing/exposition_lines.h"
#include "bulkhead/view/testdata/example_snapshot.h"

namespace bulkhead {
namespace {

using namespace std::chrono_literals;
using view_testing::kPublishedMaxAge;
using view_testing::TwoHosts;

// TwoHosts as published at `at`.
DeliverySnapshot TwoHostsAt(TimePoint at) {
  DeliverySnapshot s = TwoHosts();
  s.at = at;
  return s;
}

TEST(DeliveryGaugesTest, GaugeValuesPerHost) {
  const DeliverySnapshot s = TwoHosts();
  using Values = std::vector<std::pair<std::string, double>>;
  EXPECT_EQ(HostGaugeValues(s, HostGauge::kInFlight),
            (Values{{"a.example", 2.0}, {"b.example:8443", 0.0}}));
  EXPECT_EQ(HostGaugeValues(s, HostGauge::kCap),
            (Values{{"a.example", 4.0}, {"b.example:8443", 1.0}}));
  EXPECT_EQ(HostGaugeValues(s, HostGauge::kBreakerOpen),
            (Values{{"a.example", 0.0}, {"b.example:8443", 1.0}}));
  DeliverySnapshot half_open = TwoHosts();
  half_open.hosts[0].breaker = BreakerState::kHalfOpen;
  EXPECT_EQ(HostGaugeValues(half_open, HostGauge::kBreakerOpen)[0].second, 1.0)
      << "half-open counts as open";
}

TEST(DeliveryGaugesTest, GaugesReadTheLatestPublishedSnapshot) {
  namespace mn = metric_names;
  ManualClock clock;
  TopNLabels labels(clock, TopNLabelsOptions{});
  Published<DeliverySnapshot> published;
  Registry registry;
  ASSERT_TRUE(RegisterDeliveryGauges(registry, published, labels, clock, kPublishedMaxAge).ok());
  auto collect = [&] {
    std::map<std::string, FamilySnapshot> families;
    for (auto& f : registry.Collect()) families[f.name] = f;
    return families;
  };
  // Before the first publication the figures are missing and counted, never invented.
  std::string before = RenderPrometheusText(registry);
  EXPECT_EQ(before.find("\nbulkhead_parked_jobs "), std::string::npos) << before;
  EXPECT_TRUE(
      HasLine(before, R"(bulkhead_metrics_collect_errors_total{metric="bulkhead_parked_jobs"} 1)"))
      << before;

  // Hosts get their own label once attempts were counted for them; the rest fold into "other".
  labels.RecordAndLabel("a.example");
  labels.RecordAndLabel("b.example:8443");
  published.Publish(TwoHostsAt(clock.Now()));
  auto after = collect();
  EXPECT_EQ(after[std::string(mn::kParkedJobs)].samples[0].value, 5.0);
  ASSERT_TRUE(after.count(std::string(mn::kHostCap)));
  std::map<std::string, double> caps;
  for (const auto& sample : after[std::string(mn::kHostCap)].samples) {
    caps[sample.label_values.at(0)] = sample.value;
  }
  EXPECT_EQ(caps, (std::map<std::string, double>{{"a.example", 4.0}, {"b.example:8443", 1.0}}));

  RemoveDeliveryGauges(registry);
  EXPECT_FALSE(collect().count(std::string(mn::kHostCap)));
}

TEST(DeliveryGaugesTest, ScrapeLines) {
  ManualClock clock;
  TopNLabels labels(clock, TopNLabelsOptions{});
  Published<DeliverySnapshot> published;
  Registry registry;
  ASSERT_TRUE(RegisterDeliveryGauges(registry, published, labels, clock, kPublishedMaxAge).ok());
  labels.RecordAndLabel("a.example");
  labels.RecordAndLabel("b.example:8443");
  published.Publish(TwoHostsAt(clock.Now()));
  std::string text = RenderPrometheusText(registry);
  for (const char* line :
       {"bulkhead_host_inflight{host=\"a.example\"} 2",
        "bulkhead_host_inflight{host=\"b.example:8443\"} 0",
        "bulkhead_host_cap{host=\"a.example\"} 4", "bulkhead_host_cap{host=\"b.example:8443\"} 1",
        "bulkhead_host_breaker_open{host=\"a.example\"} 0",
        "bulkhead_host_breaker_open{host=\"b.example:8443\"} 1", "bulkhead_parked_jobs 5"}) {
    EXPECT_NE(text.find("\n" + std::string(line) + "\n"), std::string::npos) << line << "\n"
                                                                             << text;
  }
  RemoveDeliveryGauges(registry);
}

// As the engine's figures (view/metrics_gauges.h): once the loop stops publishing, the per-host
// gauges and bulkhead_parked_jobs go missing and are counted, never frozen.
TEST(DeliveryGaugesTest, MissingAndCountedOnceTheSnapshotIsTooOld) {
  ManualClock clock;
  TopNLabels labels(clock, TopNLabelsOptions{});
  Published<DeliverySnapshot> published;
  Registry registry;
  ASSERT_TRUE(RegisterDeliveryGauges(registry, published, labels, clock, kPublishedMaxAge).ok());
  labels.RecordAndLabel("a.example");
  published.Publish(TwoHostsAt(clock.Now()));
  clock.Advance(kPublishedMaxAge);
  std::string fresh = RenderPrometheusText(registry);
  EXPECT_TRUE(HasLine(fresh, "bulkhead_parked_jobs 5")) << "still fresh: " << fresh;
  EXPECT_TRUE(HasLine(fresh, R"(bulkhead_host_cap{host="a.example"} 4)")) << fresh;

  clock.Advance(1us);
  std::string text = RenderPrometheusText(registry);
  EXPECT_EQ(text.find("\nbulkhead_parked_jobs "), std::string::npos) << "never frozen: " << text;
  EXPECT_EQ(text.find("\nbulkhead_host_cap{"), std::string::npos) << text;
  EXPECT_EQ(text.find("\nbulkhead_host_inflight{"), std::string::npos) << text;
  EXPECT_EQ(text.find("\nbulkhead_host_breaker_open{"), std::string::npos) << text;
  for (const char* metric : {"bulkhead_parked_jobs", "bulkhead_host_cap", "bulkhead_host_inflight",
                             "bulkhead_host_breaker_open"}) {
    EXPECT_TRUE(HasLine(
        text, std::string(R"(bulkhead_metrics_collect_errors_total{metric=")") + metric + "\"} 1"))
        << metric << "\n"
        << text;
  }

  published.Publish(TwoHostsAt(clock.Now()));
  EXPECT_TRUE(HasLine(RenderPrometheusText(registry), "bulkhead_parked_jobs 5")) << "back";
  RemoveDeliveryGauges(registry);
}

// Cluster-wide caps: the node count and this node's share of the caps, as published.
TEST(DeliveryGaugesTest, ClusterShareLines) {
  ManualClock clock;
  TopNLabels labels(clock, TopNLabelsOptions{});
  Published<DeliverySnapshot> published;
  Registry registry;
  ASSERT_TRUE(RegisterDeliveryGauges(registry, published, labels, clock, kPublishedMaxAge).ok());
  DeliverySnapshot s = TwoHostsAt(clock.Now());
  s.cluster_nodes = 2;
  s.max_in_flight = 128;
  s.host_cap_max = 16;
  published.Publish(s);
  std::string text = RenderPrometheusText(registry);
  for (const char* line : {"bulkhead_cluster_nodes 2", "bulkhead_delivery_max_inflight 128",
                           "bulkhead_delivery_host_cap_max 16"}) {
    EXPECT_TRUE(HasLine(text, line)) << line << "\n" << text;
  }
  RemoveDeliveryGauges(registry);
  EXPECT_EQ(RenderPrometheusText(registry).find("bulkhead_cluster_nodes"), std::string::npos);
}

}  // namespace
}  // namespace bulkhead
