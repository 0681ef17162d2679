#include "bulkhead/dashboard/host_rates.h"

#include <gtest/gtest.h>

namespace bulkhead::dashboard {
namespace {

using namespace std::chrono_literals;

TEST(HostRatesTest, ChangeOverTheLastMinuteScaledToSixtySeconds) {
  HostRates rates;
  TimePoint t0 = FromUnixMicros(1'700'000'000'000'000);
  rates.Add(t0, {{.host = "a", .successes = 100, .failures = 0}});
  EXPECT_FALSE(rates.Of("a").has_value()) << "one sample: no rate yet";
  for (int i = 1; i <= 90; ++i) {
    // 2 successes and 1 failure a second.
    rates.Add(t0 + std::chrono::seconds(i),
              {{.host = "a", .successes = 100 + 2 * i, .failures = i}});
  }
  auto r = rates.Of("a");
  ASSERT_TRUE(r.has_value());
  EXPECT_NEAR(r->successes, 120, 1e-9);
  EXPECT_NEAR(r->failures, 60, 1e-9);
  EXPECT_FALSE(rates.Of("b").has_value());
}

TEST(HostRatesTest, GoneHostsAreForgottenAndResetCountersRestart) {
  HostRates rates;
  TimePoint t0 = FromUnixMicros(0);
  rates.Add(t0, {{.host = "a", .successes = 50}});
  rates.Add(t0 + 1s, {{.host = "a", .successes = 60}});
  rates.Add(t0 + 2s, {});
  EXPECT_FALSE(rates.Of("a").has_value());
  rates.Add(t0 + 3s, {{.host = "a", .successes = 70}});
  rates.Add(t0 + 4s, {{.host = "a", .successes = 1}});  // evicted and made anew
  EXPECT_FALSE(rates.Of("a").has_value());
  rates.Add(t0 + 5s, {{.host = "a", .successes = 2}});
  EXPECT_NEAR(rates.Of("a")->successes, 60, 1e-9);
}

}  // namespace
}  // namespace bulkhead::dashboard
