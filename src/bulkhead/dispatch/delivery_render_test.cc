#include "bulkhead/dispatch/delivery_render.h"

#include <gtest/gtest.h>

#include <map>

#include "bulkhead/metrics/metric_names.h"

namespace bulkhead {
namespace {

using std::chrono::milliseconds;

DeliverySnapshot TwoHosts() {
  DeliverySnapshot s;
  CompartmentSnapshot a;
  a.host = "a.example";
  a.in_flight = 2;
  a.limit = 4;
  a.latency_p50 = milliseconds(120);
  a.latency_p99 = std::chrono::microseconds(250'500);
  a.successes = 7;
  a.overloaded = 1;
  CompartmentSnapshot b;
  b.host = "b.example:8443";
  b.limit = 1;
  b.breaker = BreakerState::kOpen;
  b.breaker_openings = 3;
  b.failures = 9;
  b.parked = 5;
  b.unavailable = true;
  b.failing_since = FromUnixMicros(1'700'000'000'000'000);
  b.retry_after_until = FromUnixMicros(1'700'000'120'000'000);
  s.hosts = {a, b};
  s.parked = 5;
  return s;
}

TEST(DeliveryRenderTest, HostsJsonHasOneObjectPerHost) {
  EXPECT_EQ(RenderHostsJson(DeliverySnapshot{}), "[]");
  EXPECT_EQ(RenderHostsJson(TwoHosts()),
            "[{\"breaker\":\"closed\",\"breaker_openings\":0,\"cap\":4,\"failing_since\":null,"
            "\"failures\":0,\"host\":\"a.example\",\"in_flight\":2,\"latency_p50_ms\":120.0,"
            "\"latency_p99_ms\":250.5,\"overloaded\":1,\"parked\":0,\"retry_after_until\":null,"
            "\"successes\":7,\"unavailable\":false},"
            "{\"breaker\":\"open\",\"breaker_openings\":3,\"cap\":1,"
            "\"failing_since\":\"2023-11-14T22:13:20Z\",\"failures\":9,\"host\":\"b.example:8443\","
            "\"in_flight\":0,\"latency_p50_ms\":0.0,\"latency_p99_ms\":0.0,\"overloaded\":0,"
            "\"parked\":5,\"retry_after_until\":\"2023-11-14T22:15:20Z\",\"successes\":0,"
            "\"unavailable\":true}]");
}

TEST(DeliveryRenderTest, GaugeValuesPerHost) {
  const DeliverySnapshot s = TwoHosts();
  using Values = std::vector<std::pair<std::string, double>>;
  EXPECT_EQ(HostGaugeValues(s, HostGauge::kInFlight),
            (Values{{"a.example", 2.0}, {"b.example:8443", 0.0}}));
  EXPECT_EQ(HostGaugeValues(s, HostGauge::kCap),
            (Values{{"a.example", 4.0}, {"b.example:8443", 1.0}}));
  EXPECT_EQ(HostGaugeValues(s, HostGauge::kBreakerOpen),
            (Values{{"a.example", 0.0}, {"b.example:8443", 1.0}}));
}

TEST(DeliveryRenderTest, GaugesReadTheLatestPublishedSnapshot) {
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

}  // namespace
}  // namespace bulkhead
