#include "bulkhead/metrics/top_n_labels.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

namespace bulkhead {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;
using ::testing::ElementsAre;

TopNLabelsOptions Options(size_t top_n, size_t max_tracked = 100) {
  TopNLabelsOptions o;
  o.top_n = top_n;
  o.max_tracked = max_tracked;
  o.refresh_interval = seconds(60);
  o.half_life = minutes(10);
  o.stickiness = 1.25;
  return o;
}

void RecordTimes(TopNLabels& labels, const std::string& host, int n) {
  for (int i = 0; i < n; ++i) labels.Record(host);
}

TEST(TopNLabelsTest, FewHostsKeepTheirOwnLabelsAtOnce) {
  ManualClock clock;
  TopNLabels labels(clock, Options(3));
  EXPECT_EQ(labels.RecordAndLabel("a.example"), "a.example");
  EXPECT_EQ(labels.RecordAndLabel("b.example"), "b.example");
  EXPECT_EQ(labels.RecordAndLabel("c.example"), "c.example");
  // A fourth host waits for the next refresh, and is folded meanwhile.
  EXPECT_EQ(labels.RecordAndLabel("d.example"), "other");
  EXPECT_EQ(labels.Label("never-seen.example"), "other");
}

TEST(TopNLabelsTest, BusierHostDisplacesTheLeastActiveAtRefresh) {
  ManualClock clock;
  TopNLabels labels(clock, Options(2));
  RecordTimes(labels, "a.example", 10);
  RecordTimes(labels, "b.example", 1);
  RecordTimes(labels, "c.example", 50);
  EXPECT_EQ(labels.Label("c.example"), "other");
  clock.Advance(seconds(59));
  EXPECT_EQ(labels.Label("c.example"), "other") << "membership changes only at refresh";
  clock.Advance(seconds(1));
  EXPECT_THAT(labels.Members(), ElementsAre("a.example", "c.example"));
  EXPECT_EQ(labels.Label("b.example"), "other");
  EXPECT_EQ(labels.Label("c.example"), "c.example");
}

TEST(TopNLabelsTest, StickinessKeepsAMemberAgainstASlightlyBusierHost) {
  ManualClock clock;
  TopNLabels labels(clock, Options(1));
  RecordTimes(labels, "a.example", 100);
  RecordTimes(labels, "b.example", 110);  // 110 < 100 * 1.25: no swap
  clock.Advance(seconds(60));
  EXPECT_THAT(labels.Members(), ElementsAre("a.example"));
  RecordTimes(labels, "b.example", 100);  // now clearly busier
  clock.Advance(seconds(60));
  EXPECT_THAT(labels.Members(), ElementsAre("b.example"));
}

TEST(TopNLabelsTest, OldActivityDecays) {
  ManualClock clock;
  TopNLabels labels(clock, Options(1));
  RecordTimes(labels, "old.example", 1000);
  clock.Advance(minutes(120));  // 12 half-lives: 1000 -> ~0.24
  RecordTimes(labels, "new.example", 5);
  clock.Advance(seconds(60));
  EXPECT_THAT(labels.Members(), ElementsAre("new.example"));
}

TEST(TopNLabelsTest, TrackedHostsAreBounded) {
  ManualClock clock;
  TopNLabels labels(clock, Options(2, 10));
  RecordTimes(labels, "busy1.example", 100);
  RecordTimes(labels, "busy2.example", 100);
  for (int i = 0; i < 1000; ++i) labels.Record("h" + std::to_string(i) + ".example");
  EXPECT_LE(labels.tracked(), 10u);
  clock.Advance(seconds(60));
  EXPECT_THAT(labels.Members(), ElementsAre("busy1.example", "busy2.example"))
      << "members are never evicted by a churn of one-off hosts";
}

TEST(TopNLabelsTest, FoldSumsNonMembersIntoOther) {
  ManualClock clock;
  TopNLabels labels(clock, Options(2));
  labels.Record("a.example");
  labels.Record("b.example");
  auto folded = labels.Fold(
      {{"z.example", 3}, {"a.example", 4}, {"y.example", 2}, {"other", 1}, {"b.example", 0}});
  ASSERT_EQ(folded.size(), 3u);
  EXPECT_THAT(folded[0].label_values, ElementsAre("a.example"));
  EXPECT_EQ(folded[0].value, 4);
  EXPECT_THAT(folded[1].label_values, ElementsAre("b.example"));
  EXPECT_EQ(folded[1].value, 0);
  EXPECT_THAT(folded[2].label_values, ElementsAre("other"));
  EXPECT_EQ(folded[2].value, 6);
  // Nothing folded: no "other" entry.
  auto members_only = labels.Fold({{"a.example", 1}});
  ASSERT_EQ(members_only.size(), 1u);
  EXPECT_THAT(members_only[0].label_values, ElementsAre("a.example"));
}

TEST(TopNLabelsTest, FoldOutputIsAValidCallbackResult) {
  ManualClock clock;
  TopNLabels labels(clock, Options(1));
  labels.Record("a.example");
  Registry registry;
  ASSERT_TRUE(registry
                  .AddCallbackGauge(
                      "bulkhead_host_inflight", "In flight.", {"host"},
                      [&]() -> Result<std::vector<MetricSample>> {
                        return labels.Fold({{"a.example", 2}, {"b.example", 1}, {"c.example", 5}});
                      })
                  .ok());
  auto snaps = registry.Collect();
  ASSERT_EQ(snaps.size(), 1u);
  ASSERT_EQ(snaps[0].samples.size(), 2u);
  EXPECT_EQ(snaps[0].samples[1].value, 6);
}

TEST(TopNLabelsTest, ConcurrentUseIsSafe) {
  ManualClock clock;
  TopNLabels labels(clock, Options(5, 50));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5000; ++i) {
        std::string host = "h" + std::to_string((i * 7 + t) % 80) + ".example";
        std::string label = labels.RecordAndLabel(host);
        EXPECT_TRUE(label == host || label == "other");
        if (t == 0 && i % 500 == 0) clock.Advance(seconds(60));
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_LE(labels.Members().size(), 5u);
  EXPECT_LE(labels.tracked(), 50u);
}

}  // namespace
}  // namespace bulkhead
