#include "bulkhead/view/delivery_gauges.h"

#include <gtest/gtest.h>

#include <map>

#include "bulkhead/metrics/metric_names.h"
#include "bulkhead/metrics/prometheus_text.h"
#include "bulkhead/view/testdata/example_snapshot.h"

namespace bulkhead {
namespace {

using view_testing::TwoHosts;

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
  PublishedDeliverySnapshot published;
  Registry registry;
  ASSERT_TRUE(RegisterDeliveryGauges(registry, published, labels).ok());
  auto collect = [&] {
    std::map<std::string, FamilySnapshot> families;
    for (auto& f : registry.Collect()) families[f.name] = f;
    return families;
  };
  auto before = collect();
  ASSERT_TRUE(before.count(std::string(mn::kParkedJobs)));
  EXPECT_EQ(before[std::string(mn::kParkedJobs)].samples[0].value, 0.0);

  // Hosts get their own label once attempts were counted for them; the rest fold into "other".
  labels.RecordAndLabel("a.example");
  labels.RecordAndLabel("b.example:8443");
  published.Publish(TwoHosts());
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
  PublishedDeliverySnapshot published;
  Registry registry;
  ASSERT_TRUE(RegisterDeliveryGauges(registry, published, labels).ok());
  labels.RecordAndLabel("a.example");
  labels.RecordAndLabel("b.example:8443");
  published.Publish(TwoHosts());
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

}  // namespace
}  // namespace bulkhead
