#include "bulkhead/view/metrics_gauges.h"

#include <gtest/gtest.h>

#include "bulkhead/metrics/prometheus_text.h"
#include "bulkhead/metrics/testing/exposition_lines.h"
#include "bulkhead/view/testdata/example_snapshot.h"

namespace bulkhead {
namespace {

using namespace std::chrono_literals;
using view_testing::ExampleSnapshot;
using view_testing::kPublishedMaxAge;

class MetricsGaugesTest : public ::testing::Test {
 protected:
  MetricsGaugesTest() : clock_(ExampleSnapshot().engine.now) {
    Status s = RegisterEngineMetrics(registry_, published_, clock_, kPublishedMaxAge);
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  ~MetricsGaugesTest() override { UnregisterEngineMetrics(registry_); }
  EngineSnapshot Example() {
    EngineSnapshot e = ExampleSnapshot().engine;
    e.queues["idle"] = QueueSnapshot{};
    e.store_degraded = true;
    return e;
  }

  ManualClock clock_;
  Registry registry_;
  Published<EngineSnapshot> published_;
};

TEST_F(MetricsGaugesTest, ShowTheLatestPublishedSnapshot) {
  published_.Publish(Example());
  std::string text = RenderPrometheusText(registry_);
  EXPECT_TRUE(HasLine(text, R"(bulkhead_queue_size{queue="critical"} 2)")) << text;
  EXPECT_TRUE(HasLine(text, R"(bulkhead_queue_size{queue="idle"} 0)")) << text;
  EXPECT_TRUE(HasLine(text, R"(bulkhead_queue_latency_seconds{queue="default"} 3.25)")) << text;
  EXPECT_TRUE(HasLine(text, "bulkhead_scheduled_set_size 1"));
  EXPECT_TRUE(HasLine(text, "bulkhead_retry_set_size 2"));
  EXPECT_TRUE(HasLine(text, "bulkhead_dead_set_size 3"));
  EXPECT_TRUE(HasLine(text, "bulkhead_working_jobs 4"));
  EXPECT_TRUE(HasLine(text, "bulkhead_workers_connected 1"));
  EXPECT_TRUE(HasLine(text, "bulkhead_jobs_processed_total 10"));
  EXPECT_TRUE(HasLine(text, "bulkhead_jobs_failed_total 5"));
  EXPECT_TRUE(HasLine(text, "bulkhead_push_duplicates_total 6"));
  EXPECT_TRUE(HasLine(text, "bulkhead_store_degraded 1"));
  EXPECT_TRUE(HasLine(text, "bulkhead_start_time_seconds 1767225600.623456")) << text;
  EXPECT_TRUE(
      HasLine(text, std::string("bulkhead_build_info{version=\"") + BULKHEAD_VERSION + "\"} 1"));

  EngineSnapshot next = Example();
  next.queues["critical"].size = 7;
  published_.Publish(next);
  EXPECT_TRUE(
      HasLine(RenderPrometheusText(registry_), R"(bulkhead_queue_size{queue="critical"} 7)"));
}

TEST_F(MetricsGaugesTest, QueueLatencyAgesWithTheSnapshot) {
  published_.Publish(Example());
  clock_.Advance(2s);
  std::string text = RenderPrometheusText(registry_);
  EXPECT_TRUE(HasLine(text, R"(bulkhead_queue_latency_seconds{queue="default"} 5.25)")) << text;
  EXPECT_TRUE(HasLine(text, R"(bulkhead_queue_latency_seconds{queue="critical"} 2)")) << text;
  EXPECT_TRUE(HasLine(text, R"(bulkhead_queue_latency_seconds{queue="idle"} 0)")) << "empty: 0";
}

TEST_F(MetricsGaugesTest, MissingAndCountedBeforeTheFirstPublication) {
  std::string text = RenderPrometheusText(registry_);
  EXPECT_EQ(text.find("\nbulkhead_queue_size{"), std::string::npos) << text;
  EXPECT_EQ(text.find("\nbulkhead_jobs_processed_total "), std::string::npos) << text;
  EXPECT_TRUE(
      HasLine(text, R"(bulkhead_metrics_collect_errors_total{metric="bulkhead_queue_size"} 1)"))
      << text;
  EXPECT_NE(text.find("bulkhead_build_info{"), std::string::npos) << "needs no snapshot";
}

TEST_F(MetricsGaugesTest, MissingAndCountedOnceTheSnapshotIsTooOld) {
  published_.Publish(Example());
  clock_.Advance(kPublishedMaxAge);
  EXPECT_TRUE(HasLine(RenderPrometheusText(registry_), "bulkhead_working_jobs 4")) << "still fresh";
  clock_.Advance(1us);
  std::string text = RenderPrometheusText(registry_);
  EXPECT_EQ(text.find("\nbulkhead_working_jobs "), std::string::npos) << "never frozen: " << text;
  EXPECT_EQ(text.find("\nbulkhead_queue_latency_seconds{"), std::string::npos) << text;
  EXPECT_TRUE(
      HasLine(text, R"(bulkhead_metrics_collect_errors_total{metric="bulkhead_working_jobs"} 1)"))
      << text;
  EXPECT_TRUE(HasLine(text, "bulkhead_start_time_seconds 1767225600.623456")) << "cannot go stale";
  published_.Publish(Example());  // `now` is the old one: still too old
  EXPECT_EQ(RenderPrometheusText(registry_).find("\nbulkhead_working_jobs "), std::string::npos);
  EngineSnapshot fresh = Example();
  fresh.now = clock_.Now();
  published_.Publish(fresh);
  EXPECT_TRUE(HasLine(RenderPrometheusText(registry_), "bulkhead_working_jobs 4")) << "back";
}

TEST(MetricsGaugesUnregisterTest, RemovesEveryFamily) {
  ManualClock clock;
  Registry registry;
  Published<EngineSnapshot> published;
  published.Publish(ExampleSnapshot().engine);
  ASSERT_TRUE(RegisterEngineMetrics(registry, published, clock, kPublishedMaxAge).ok());
  UnregisterEngineMetrics(registry);
  EXPECT_EQ(RenderPrometheusText(registry).find("bulkhead_queue"), std::string::npos);
  EXPECT_TRUE(RegisterEngineMetrics(registry, published, clock, kPublishedMaxAge).ok())
      << "the names are free again";
  UnregisterEngineMetrics(registry);
}

}  // namespace
}  // namespace bulkhead
