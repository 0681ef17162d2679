#include "bulkhead/view/host_view.h"

#include <gtest/gtest.h>

#include "bulkhead/view/testdata/example_snapshot.h"

namespace bulkhead {
namespace {

using view_testing::TwoHosts;

TEST(HostViewTest, OneViewPerHostOfTheSnapshot) {
  EXPECT_TRUE(HostViewsFrom(DeliverySnapshot{}).empty());
  std::vector<HostView> views = HostViewsFrom(TwoHosts());
  ASSERT_EQ(views.size(), 2u);
  const HostView& a = views[0];
  EXPECT_EQ(a.host, "a.example");
  EXPECT_EQ(a.in_flight, 2);
  EXPECT_EQ(a.cap, 4);
  EXPECT_EQ(a.breaker, "closed");
  EXPECT_EQ(a.latency_p50_ms, 120.0);
  EXPECT_EQ(a.latency_p99_ms, 250.5);
  EXPECT_EQ(a.successes, 7);
  EXPECT_EQ(a.overloaded, 1);
  EXPECT_FALSE(a.failing_since.has_value());
  EXPECT_FALSE(a.breaker_open_until.has_value());
  EXPECT_EQ(a.last_error, "http 429");
  EXPECT_EQ(a.last_error_at, FromUnixMicros(1'699'999'990'000'000));
  const HostView& b = views[1];
  EXPECT_EQ(b.host, "b.example:8443");
  EXPECT_EQ(b.breaker, "open");
  EXPECT_EQ(b.breaker_openings, 3);
  EXPECT_EQ(b.failures, 9);
  EXPECT_EQ(b.parked, 5);
  EXPECT_TRUE(b.unavailable);
  EXPECT_EQ(b.failing_since, FromUnixMicros(1'700'000'000'000'000));
  EXPECT_EQ(b.retry_after_until, FromUnixMicros(1'700'000'120'000'000));
  EXPECT_EQ(b.breaker_open_until, FromUnixMicros(1'700'000'060'000'000));
  EXPECT_EQ(b.last_error, "timeout");
  EXPECT_EQ(b.last_error_at, FromUnixMicros(1'700'000'050'000'000));
}

}  // namespace
}  // namespace bulkhead
