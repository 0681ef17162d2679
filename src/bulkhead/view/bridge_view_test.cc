// The Sidekiq bridge's figures in every view: INFO (and back), `bulkhead stats`, /metrics.
#include "bulkhead/view/bridge_view.h"

#include <gtest/gtest.h>

#include "bulkhead/metrics/prometheus_text.h"
#include "bulkhead/metrics/testing/exposition_lines.h"
#include "bulkhead/view/bridge_gauges.h"
#include "bulkhead/view/info_json.h"
#include "bulkhead/view/stats_text.h"
#include "bulkhead/view/testdata/example_snapshot.h"

namespace bulkhead {
namespace {

using namespace std::chrono_literals;
using view_testing::ExampleSnapshot;
using view_testing::kPublishedMaxAge;

BridgeSnapshot ExampleBridge(TimePoint now) {
  BridgeSnapshot b;
  b.now = now;
  b.up = false;
  b.reason = "redis 127.0.0.1:6379: cannot connect: Connection refused, retrying";
  b.node = "web-1";
  b.redis = "redis://:***@127.0.0.1:6379/0";
  b.outcomes_queue = "default";
  b.queues = {{"push", 12, 4.5}, {"bulkhead", 0, 0}};
  b.polled_at = now - 1s;
  b.in_progress = 3;
  b.taken = 1000;
  b.repeats = 2;
  b.dead = 1;
  b.reaped = 7;
  b.outcomes_written = 40;
  b.outcomes_waiting = 5;
  return b;
}

TEST(BridgeViewTest, InfoCarriesTheBridgeAndReadsItBack) {
  InfoSnapshot info = ExampleSnapshot();
  EXPECT_EQ(RenderInfoJson(info).find("\"sidekiq\""), std::string::npos) << "off: no key";
  info.sidekiq = ExampleBridge(info.engine.now);
  auto back = ParseInfoJson(RenderInfoJson(info));
  ASSERT_TRUE(back.ok());
  ASSERT_TRUE(back->sidekiq.has_value());
  const BridgeSnapshot& b = *back->sidekiq;
  EXPECT_FALSE(b.up);
  EXPECT_EQ(b.reason, info.sidekiq->reason);
  EXPECT_EQ(b.node, "web-1");
  EXPECT_EQ(b.redis, "redis://:***@127.0.0.1:6379/0");
  EXPECT_EQ(b.taken, 1000);
  EXPECT_EQ(b.repeats, 2);
  EXPECT_EQ(b.dead, 1);
  EXPECT_EQ(b.reaped, 7);
  EXPECT_EQ(b.in_progress, 3);
  EXPECT_EQ(b.outcomes_written, 40);
  EXPECT_EQ(b.outcomes_waiting, 5);
  ASSERT_EQ(b.queues.size(), 2u);
  EXPECT_EQ(b.queues[1].name, "push") << "by name";
  EXPECT_EQ(b.queues[1].size, 12);
  EXPECT_DOUBLE_EQ(b.queues[1].latency_seconds, 4.5);
}

TEST(BridgeViewTest, StatsSaysWhetherTheBridgeIsUpAndItsQueues) {
  InfoSnapshot info = ExampleSnapshot();
  info.sidekiq = ExampleBridge(info.engine.now);
  std::string text = RenderStatsText(info);
  EXPECT_NE(text.find("sidekiq bridge  DOWN: redis 127.0.0.1:6379: cannot connect"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("taken 1000  repeats 2  dead 1  reaped 7  in_progress 3  outcomes written "
                      "40 (waiting 5, to queue:default)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("push                                     12        4.500"),
            std::string::npos)
      << text;
}

class BridgeGaugesTest : public ::testing::Test {
 protected:
  BridgeGaugesTest() : clock_(ExampleSnapshot().engine.now) {
    Status s = RegisterBridgeGauges(registry_, published_, clock_, kPublishedMaxAge);
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  ~BridgeGaugesTest() override { RemoveBridgeGauges(registry_); }
  ManualClock clock_;
  Registry registry_;
  Published<BridgeSnapshot> published_;
};

TEST_F(BridgeGaugesTest, EveryFigureOfTheLatestSnapshotWithTheLatencyAged) {
  published_.Publish(ExampleBridge(clock_.Now()));
  clock_.Advance(2s);
  std::string text = RenderPrometheusText(registry_);
  EXPECT_TRUE(HasLine(text, "bulkhead_sidekiq_bridge_up 0")) << text;
  EXPECT_TRUE(HasLine(text, "bulkhead_sidekiq_taken_total 1000"));
  EXPECT_TRUE(HasLine(text, "bulkhead_sidekiq_repeats_total 2"));
  EXPECT_TRUE(HasLine(text, "bulkhead_sidekiq_dead_total 1"));
  EXPECT_TRUE(HasLine(text, "bulkhead_sidekiq_reaped_total 7"));
  EXPECT_TRUE(HasLine(text, "bulkhead_sidekiq_outcomes_written_total 40"));
  EXPECT_TRUE(HasLine(text, "bulkhead_sidekiq_in_progress 3"));
  EXPECT_TRUE(HasLine(text, R"(bulkhead_sidekiq_queue_size{queue="push"} 12)"));
  // Read a second before the snapshot, which is two seconds old: 4.5 + 3.
  EXPECT_TRUE(HasLine(text, R"(bulkhead_sidekiq_queue_latency_seconds{queue="push"} 7.5)")) << text;
  EXPECT_TRUE(HasLine(text, R"(bulkhead_sidekiq_queue_latency_seconds{queue="bulkhead"} 0)"));
}

TEST_F(BridgeGaugesTest, MissingOnceTheSnapshotIsTooOld) {
  published_.Publish(ExampleBridge(clock_.Now()));
  clock_.Advance(kPublishedMaxAge + 1s);
  std::string text = RenderPrometheusText(registry_);
  EXPECT_EQ(text.find("\nbulkhead_sidekiq_bridge_up "), std::string::npos) << text;
  EXPECT_TRUE(HasLine(
      text, R"(bulkhead_metrics_collect_errors_total{metric="bulkhead_sidekiq_bridge_up"} 1)"))
      << text;
}

}  // namespace
}  // namespace bulkhead
