#include "bulkhead/view/cron_view.h"

#include <gtest/gtest.h>

#include "bulkhead/util/json.h"
#include "bulkhead/util/time_format.h"

namespace bulkhead {
namespace {

TEST(CronViewTest, ParsesBackWhatCronJsonWrites) {
  std::vector<CronEntrySnapshot> cron = {
      CronEntrySnapshot{.name = "pinger",
                        .schedule = "@every 30s",
                        .next_run = *ParseRfc3339("2026-01-01T00:02:00Z")},
      CronEntrySnapshot{.name = "FiveJob",
                        .schedule = "*/5 * * * *",
                        .next_run = *ParseRfc3339("2026-01-01T00:05:00Z"),
                        .last_run = *ParseRfc3339("2026-01-01T00:00:00Z"),
                        .enqueued = 7,
                        .lost = 1}};
  auto parsed = ParseCronJson(CronJson(cron));
  ASSERT_EQ(parsed.size(), 2u);
  // Name order: a JSON object keeps no config order.
  EXPECT_EQ(parsed[0].name, "FiveJob");
  EXPECT_EQ(parsed[0].schedule, "*/5 * * * *");
  EXPECT_EQ(parsed[0].next_run, cron[1].next_run);
  EXPECT_EQ(parsed[0].last_run, cron[1].last_run);
  EXPECT_EQ(parsed[0].enqueued, 7);
  EXPECT_EQ(parsed[0].lost, 1);
  EXPECT_EQ(parsed[1].name, "pinger");
  EXPECT_FALSE(parsed[1].last_run.has_value());
}

TEST(CronViewTest, MalformedEntriesAreSkippedOrZero) {
  auto doc = *ParseJson(R"({"a":1,"b":{"next_run":"soon","last_run":"never","lost":"x"}})",
                        kDefaultMaxJsonDepth);
  auto parsed = ParseCronJson(doc);
  ASSERT_EQ(parsed.size(), 1u);
  EXPECT_EQ(parsed[0].name, "b");
  EXPECT_EQ(parsed[0].schedule, "?");
  EXPECT_EQ(parsed[0].next_run, TimePoint{});
  EXPECT_FALSE(parsed[0].last_run.has_value());
  EXPECT_EQ(parsed[0].lost, 0);
  EXPECT_TRUE(ParseCronJson(nlohmann::json::array()).empty());
  std::string out;
  AppendCronText(out, {});
  EXPECT_EQ(out, "");
}

}  // namespace
}  // namespace bulkhead
