#include "bulkhead/view/throttle_view.h"

#include <gtest/gtest.h>

#include "bulkhead/metrics/prometheus_text.h"
#include "bulkhead/util/json.h"
#include "bulkhead/view/info_json.h"
#include "bulkhead/view/metrics_gauges.h"
#include "bulkhead/view/stats_text.h"
#include "bulkhead/view/testdata/example_snapshot.h"

namespace bulkhead {
namespace {

using namespace std::chrono_literals;

std::vector<ThrottleSnapshot> Example() {
  return {
      ThrottleSnapshot{.queue = "bulk",
                       .per_worker = true,
                       .limit = 2,
                       .timeout_seconds = 60,
                       .in_use = 5,
                       .max_per_worker = 2},
      ThrottleSnapshot{
          .queue = "push", .per_worker = false, .limit = 3, .timeout_seconds = 30, .in_use = 1}};
}

bool SameThrottles(const std::vector<ThrottleSnapshot>& a, const std::vector<ThrottleSnapshot>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].queue != b[i].queue || a[i].per_worker != b[i].per_worker ||
        a[i].limit != b[i].limit || a[i].timeout_seconds != b[i].timeout_seconds ||
        a[i].in_use != b[i].in_use || a[i].max_per_worker != b[i].max_per_worker) {
      return false;
    }
  }
  return true;
}

TEST(ThrottleViewTest, InfoShowsThrottlesInFaktorysTermsAndParsesThemBack) {
  InfoSnapshot info = view_testing::ExampleSnapshot();
  info.engine.throttles = Example();
  std::string text = RenderInfoJson(info);
  auto doc = *ParseJson(text, kDefaultMaxJsonDepth);
  EXPECT_EQ(doc["throttles"].dump(),
            R"({"bulk":{"in_use":5,"max_per_worker":2,"timeout":60,"worker":2},)"
            R"("push":{"concurrency":3,"in_use":1,"timeout":30}})");
  auto parsed = ParseInfoJson(text);
  ASSERT_TRUE(parsed.ok());
  EXPECT_TRUE(SameThrottles(parsed->engine.throttles, Example()));
}

TEST(ThrottleViewTest, NoThrottlesNoKey) {
  InfoSnapshot info = view_testing::ExampleSnapshot();
  EXPECT_FALSE(ParseJson(RenderInfoJson(info), kDefaultMaxJsonDepth)->contains("throttles"));
  std::string out;
  AppendThrottlesText(out, {});
  EXPECT_EQ(out, "");
}

TEST(ThrottleViewTest, StatsShowsAThrottleTable) {
  InfoSnapshot info = view_testing::ExampleSnapshot();
  info.engine.throttles = Example();
  std::string text = RenderStatsText(info);
  EXPECT_NE(text.find("THROTTLE                         KIND          LIMIT   IN_USE MAX/WORKER "
                      " TIMEOUT\n"
                      "bulk                             worker            2        5          2 "
                      "     60s\n"
                      "push                             concurrency       3        1          - "
                      "     30s\n"),
            std::string::npos)
      << text;
}

TEST(ThrottleViewTest, MetricsPerThrottledQueue) {
  ManualClock clock(view_testing::ExampleSnapshot().engine.now);
  Registry registry;
  Published<EngineSnapshot> published;
  ASSERT_TRUE(RegisterEngineMetrics(registry, published, clock, 3s).ok());
  EngineSnapshot e = view_testing::ExampleSnapshot().engine;
  e.throttles = Example();
  published.Publish(e);
  std::string text = RenderPrometheusText(registry);
  for (const char* line :
       {R"(bulkhead_throttle_limit{queue="bulk"} 2)", R"(bulkhead_throttle_limit{queue="push"} 3)",
        R"(bulkhead_throttle_in_use{queue="bulk"} 5)",
        R"(bulkhead_throttle_in_use{queue="push"} 1)",
        R"(bulkhead_throttle_worker_max_in_use{queue="bulk"} 2)"}) {
    EXPECT_NE(text.find(std::string("\n") + line + "\n"), std::string::npos) << line << "\n"
                                                                             << text;
  }
  EXPECT_EQ(text.find(R"(bulkhead_throttle_worker_max_in_use{queue="push"})"), std::string::npos);
  UnregisterEngineMetrics(registry);
}

}  // namespace
}  // namespace bulkhead
