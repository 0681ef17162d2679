#include "bulkhead/view/api_json.h"

#include <gtest/gtest.h>

#include "bulkhead/view/testdata/example_snapshot.h"

namespace bulkhead {
namespace {

using view_testing::ExampleSnapshot;
using view_testing::ExampleWorkers;
using view_testing::TwoHosts;

TEST(ApiJsonTest, Workers) {
  WorkerInfo w = ExampleWorkers().at("w1");
  w.last_beat = FromUnixMicros(1'767'225'692'000'000);
  WorkerInfo other = w;
  other.wid = "w2";
  EXPECT_EQ(RenderWorkersJson({{"", w}, {"node-b", other}}),
            R"([{"connections":2,"hostname":"box","labels":["a","b"],)"
            R"("last_beat":"2026-01-01T00:01:32Z","node":"","pid":42,"rss_kb":1024,)"
            R"("state":"quiet","wid":"w1"},)"
            R"({"connections":2,"hostname":"box","labels":["a","b"],)"
            R"("last_beat":"2026-01-01T00:01:32Z","node":"node-b","pid":42,"rss_kb":1024,)"
            R"("state":"quiet","wid":"w2"}])");
  EXPECT_EQ(RenderWorkersJson({}), "[]");
}

// The hosts JSON as the dispatcher rendered it before the views moved here (its exact string),
// plus breaker_open_until, last_error and last_error_at.
TEST(ApiJsonTest, HostsJsonHasOneObjectPerHost) {
  EXPECT_EQ(RenderHostsJson(HostViewsFrom(DeliverySnapshot{})), "[]");
  EXPECT_EQ(RenderHostsJson(HostViewsFrom(TwoHosts())),
            "[{\"breaker\":\"closed\",\"breaker_open_until\":null,\"breaker_openings\":0,"
            "\"cap\":4,\"failing_since\":null,"
            "\"failures\":0,\"host\":\"a.example\",\"in_flight\":2,\"last_error\":\"http 429\","
            "\"last_error_at\":\"2023-11-14T22:13:10Z\",\"latency_p50_ms\":120.0,"
            "\"latency_p99_ms\":250.5,\"overloaded\":1,\"parked\":0,\"retry_after_until\":null,"
            "\"successes\":7,\"unavailable\":false},"
            "{\"breaker\":\"open\",\"breaker_open_until\":\"2023-11-14T22:14:20Z\","
            "\"breaker_openings\":3,\"cap\":1,"
            "\"failing_since\":\"2023-11-14T22:13:20Z\",\"failures\":9,\"host\":\"b.example:8443\","
            "\"in_flight\":0,\"last_error\":\"timeout\",\"last_error_at\":\"2023-11-14T22:14:10Z\","
            "\"latency_p50_ms\":0.0,\"latency_p99_ms\":0.0,\"overloaded\":0,"
            "\"parked\":5,\"retry_after_until\":\"2023-11-14T22:15:20Z\",\"successes\":0,"
            "\"unavailable\":true}]");
}

TEST(ApiJsonTest, HostsJsonLastErrorAndBreakerOpenUntilAreNullWhenUnset) {
  HostView h;
  h.host = "c.example";
  nlohmann::json v = HostsJsonValue({h});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_TRUE(v[0].at("last_error").is_null());
  EXPECT_TRUE(v[0].at("last_error_at").is_null());
  EXPECT_TRUE(v[0].at("breaker_open_until").is_null());
}

TEST(ApiJsonTest, HostsJsonValueIsTheSameArray) {
  std::vector<HostView> hosts = HostViewsFrom(TwoHosts());
  EXPECT_EQ(HostsJsonValue(hosts).dump(), RenderHostsJson(hosts));
  EXPECT_TRUE(HostsJsonValue({}).is_array());
}

}  // namespace
}  // namespace bulkhead
