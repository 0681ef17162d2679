#include "bulkhead/view/stats_text.h"

#include <gtest/gtest.h>

#include "bulkhead/util/time_format.h"
#include "bulkhead/view/info_json.h"
#include "bulkhead/view/testdata/example_snapshot.h"

namespace bulkhead {
namespace {

using view_testing::ExampleSnapshot;

constexpr char kExampleText[] =
    "bulkhead 9.9.9  store=sqlite  uptime=92s  connections=3  workers=1\n"
    "processed 10  failed 5  enqueued 3\n"
    "\n"
    "QUEUE                                  SIZE   LATENCY(s)\n"
    "critical                                  2        0.000\n"
    "default                                   1        3.250\n"
    "\n"
    "SET                                    SIZE\n"
    "scheduled                                 1\n"
    "retries                                   2\n"
    "dead                                      3\n"
    "working                                   4\n"
    "\n"
    "HOST                             INFLIGHT   CAP BREAKER      PARKED  P99(ms)  LAST ERROR\n"
    "a.example                               1     4 open              3      250  http 503\n";

TEST(StatsTextTest, RendersASnapshot) {
  EXPECT_EQ(RenderStatsText(ExampleSnapshot()), kExampleText);
}

TEST(StatsTextTest, DeliveryLineFromInfo) {
  InfoSnapshot info = ExampleSnapshot();
  info.delivery = ClusterView{.cluster_nodes = 2,
                              .max_in_flight = 50,
                              .in_flight = 3,
                              .host_cap_min = 1,
                              .host_cap_max = 8};
  auto text = StatsTextFromInfo(RenderInfoJson(info), [](const std::vector<std::string>&) {
    return Result<std::string>(std::string("{}"));
  });
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_NE(text->find("\nworking                                   4\n"
                       "\ndelivery  cluster_nodes=2  in_flight=3/50  host_cap=1..8\n"
                       "\nHOST "),
            std::string::npos)
      << *text;
  EXPECT_EQ(RenderStatsText(ExampleSnapshot()).find("delivery"), std::string::npos)
      << "no line without a dispatcher";
}

TEST(StatsTextTest, ALastErrorIsOneLineOfAtMost60Bytes) {
  InfoSnapshot info = ExampleSnapshot();
  HostView quiet = (*info.hosts)[0];
  quiet.host = "b.example";
  quiet.last_error.clear();
  HostView loud = (*info.hosts)[0];
  loud.host = "c.example";
  // 59 ASCII bytes, then "é" (2 bytes) across the cut, a newline and more.
  loud.last_error = std::string(59, 'x') + "\xC3\xA9\nsecond line";
  info.hosts->push_back(quiet);
  info.hosts->push_back(loud);
  std::string text = RenderStatsText(info);
  EXPECT_NE(text.find("b.example                               1     4 open              3      "
                      "250  -\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  " + std::string(59, 'x') + "…\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("second line"), std::string::npos) << text;
}

TEST(StatsTextTest, NoHostTableWithoutHosts) {
  InfoSnapshot info = ExampleSnapshot();
  info.hosts = std::vector<HostView>{};
  std::string text = RenderStatsText(info);
  EXPECT_EQ(text.find("HOST"), std::string::npos);
  std::string last = "\nworking                                   4\n";
  EXPECT_EQ(text.substr(text.size() - last.size()), last) << "the SET table ends the text";
}

TEST(StatsTextTest, FromInfoAsksTheLatencyOfEveryQueueOnce) {
  std::vector<std::vector<std::string>> asked;
  auto text = StatsTextFromInfo(RenderInfoJson(ExampleSnapshot()),
                                [&](const std::vector<std::string>& queues) -> Result<std::string> {
                                  asked.push_back(queues);
                                  return std::string(R"({"critical":0,"default":3.25})");
                                });
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text, kExampleText);
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(asked[0], (std::vector<std::string>{"critical", "default"}));
}

TEST(StatsTextTest, FromInfoShowsZeroLatencyWhenTheQueryFails) {
  InfoSnapshot info = ExampleSnapshot();
  for (auto reply : {Result<std::string>(Status::Unavailable("down")),
                     Result<std::string>(std::string("not json")),
                     Result<std::string>(std::string(R"({"default":"slow"})"))}) {
    auto text = StatsTextFromInfo(RenderInfoJson(info), [&](const auto&) { return reply; });
    ASSERT_TRUE(text.ok());
    EXPECT_NE(text->find("default                                   1        0.000\n"),
              std::string::npos)
        << *text;
  }
}

TEST(StatsTextTest, FromInfoWithoutQueuesAsksNothing) {
  InfoSnapshot info = ExampleSnapshot();
  info.engine.queues.clear();
  bool asked = false;
  auto text = StatsTextFromInfo(RenderInfoJson(info), [&](const auto&) -> Result<std::string> {
    asked = true;
    return std::string("{}");
  });
  ASSERT_TRUE(text.ok());
  EXPECT_FALSE(asked);
}

// Batch counters and cron entries, as `bulkhead stats` reads them back from INFO.
InfoSnapshot WithBatchesAndCron() {
  InfoSnapshot info = ExampleSnapshot();
  info.engine.batches = BatchCounts{.created = 4, .committed = 3, .expired = 1, .succeeded = 2};
  info.engine.cron = {CronEntrySnapshot{.name = "FiveJob",
                                        .schedule = "*/5 * * * *",
                                        .next_run = *ParseRfc3339("2026-01-01T00:05:00Z"),
                                        .last_run = *ParseRfc3339("2026-01-01T00:00:00Z"),
                                        .enqueued = 7,
                                        .lost = 1},
                      CronEntrySnapshot{.name = "pinger",
                                        .schedule = "@every 30s",
                                        .next_run = *ParseRfc3339("2026-01-01T00:02:00Z")}};
  return info;
}

constexpr char kBatchAndCronText[] =
    "\n"
    "BATCH                                 COUNT\n"
    "created                                   4\n"
    "committed                                 3\n"
    "expired                                   1\n"
    "succeeded                                 2\n"
    "\n"
    "CRON                     SCHEDULE             NEXT_RUN                    LAST_RUN\n"
    "FiveJob                  */5 * * * *          2026-01-01T00:05:00Z        "
    "2026-01-01T00:00:00Z\n"
    "pinger                   @every 30s           2026-01-01T00:02:00Z        -\n"
    "\n"
    "HOST ";

TEST(StatsTextTest, ShowsBatchCountersAndCronEntries) {
  std::string text = RenderStatsText(WithBatchesAndCron());
  EXPECT_NE(text.find(kBatchAndCronText), std::string::npos) << text;
  auto via_info = StatsTextFromInfo(RenderInfoJson(WithBatchesAndCron()),
                                    [](const auto&) { return Result<std::string>("{}"); });
  ASSERT_TRUE(via_info.ok());
  EXPECT_NE(via_info->find(kBatchAndCronText), std::string::npos) << *via_info;
}

TEST(StatsTextTest, NoBatchOrCronTableWhileThereIsNothingToShow) {
  std::string text = RenderStatsText(ExampleSnapshot());
  EXPECT_EQ(text.find("BATCH"), std::string::npos);
  EXPECT_EQ(text.find("CRON"), std::string::npos);
  InfoSnapshot info = ExampleSnapshot();
  info.engine.batches.expired = 1;
  EXPECT_NE(RenderStatsText(info).find("\nBATCH "), std::string::npos);
}

TEST(StatsTextTest, FromInfoRefusesWhatIsNotAnInfoDocument) {
  auto text = StatsTextFromInfo("[1]", [](const auto&) { return Result<std::string>("{}"); });
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().message(), "INFO reply is not a JSON object");
}

}  // namespace
}  // namespace bulkhead
