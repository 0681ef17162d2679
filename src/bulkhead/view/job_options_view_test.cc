// Unique, expiring and cron figures in INFO and /metrics.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "bulkhead/metrics/prometheus_text.h"
#include "bulkhead/util/time_format.h"
#include "bulkhead/view/info_json.h"
#include "bulkhead/view/metrics_gauges.h"
#include "bulkhead/view/testdata/example_snapshot.h"

namespace bulkhead {
namespace {

using namespace std::chrono_literals;

InfoSnapshot WithJobOptions() {
  InfoSnapshot info = view_testing::ExampleSnapshot();
  EngineSnapshot& e = info.engine;
  e.unique = UniqueJobCounts{5, 2};
  e.jobs_expired = {{"default", 3}};
  e.cron = {CronEntrySnapshot{"FiveJob", "*/5 * * * *", *ParseRfc3339("2026-01-01T00:05:00Z"),
                              *ParseRfc3339("2026-01-01T00:00:00Z"), 7, 1},
            CronEntrySnapshot{"pinger", "@every 30s", *ParseRfc3339("2026-01-01T00:00:30Z"),
                              std::nullopt, 0, 0}};
  return info;
}

TEST(JobOptionsViewTest, InfoShowsThemOnlyWhenThereIsSomething) {
  nlohmann::json plain = nlohmann::json::parse(RenderInfoJson(view_testing::ExampleSnapshot()));
  EXPECT_FALSE(plain["faktory"].contains("unique"));
  EXPECT_FALSE(plain["faktory"].contains("expired"));
  EXPECT_FALSE(plain["faktory"].contains("cron"));
  nlohmann::json doc = nlohmann::json::parse(RenderInfoJson(WithJobOptions()));
  EXPECT_EQ(doc["faktory"]["unique"], nlohmann::json::parse(R"({"locks":5,"denied":2})"));
  EXPECT_EQ(doc["faktory"]["expired"], nlohmann::json::parse(R"({"default":3})"));
  EXPECT_EQ(doc["faktory"]["cron"], nlohmann::json::parse(R"({
    "FiveJob":{"schedule":"*/5 * * * *","next_run":"2026-01-01T00:05:00Z",
               "last_run":"2026-01-01T00:00:00Z","enqueued":7,"lost":1},
    "pinger":{"schedule":"@every 30s","next_run":"2026-01-01T00:00:30Z","last_run":null,
              "enqueued":0,"lost":0}})"));
}

TEST(JobOptionsViewTest, MetricsShowThem) {
  InfoSnapshot info = WithJobOptions();
  ManualClock clock(info.engine.now);
  Registry registry;
  Published<EngineSnapshot> published;
  ASSERT_TRUE(RegisterEngineMetrics(registry, published, clock, 3s).ok());
  published.Publish(info.engine);
  std::string text = RenderPrometheusText(registry);
  for (const char* line : {
           "bulkhead_unique_locks_total 5",
           "bulkhead_unique_denied_total 2",
           R"(bulkhead_jobs_expired_total{queue="default"} 3)",
           R"(bulkhead_cron_enqueued_total{entry="FiveJob"} 7)",
           R"(bulkhead_cron_enqueued_total{entry="pinger"} 0)",
           R"(bulkhead_cron_lost_total{entry="FiveJob"} 1)",
           R"(bulkhead_cron_next_run_timestamp_seconds{entry="FiveJob"} 1767225900)",
       }) {
    EXPECT_NE(text.find(std::string("\n") + line + "\n"), std::string::npos) << line << "\n"
                                                                             << text;
  }
  UnregisterEngineMetrics(registry);
}

}  // namespace
}  // namespace bulkhead
