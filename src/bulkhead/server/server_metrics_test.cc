// ServerMetrics over a real engine and event loop: what the loop publishes is what a collection
// on another thread reads, and such a collection never waits for the loop. Every test runs twice:
// "Inline" on the memory store as it is, "Deferred" on it wrapped in DeferredStore (every answer on
// a later turn of the loop, as from a networked store).
#include "bulkhead/server/server_metrics.h"

#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <future>
#include <thread>

#include "bulkhead/engine/job_parser.h"
#include "bulkhead/metrics/prometheus_text.h"
#include "bulkhead/metrics/testing/exposition_lines.h"
#include "bulkhead/store/testing/deferred_store.h"
#include "bulkhead/store/testing/store_timing.h"
#include "bulkhead/util/simulated_clock.h"

namespace bulkhead {
namespace {

class ServerMetricsTest : public ::testing::TestWithParam<StoreTiming> {
 protected:
  ServerMetricsTest() {
    store_ = std::move(*OpenStoreFromUrl("memory:", [](std::function<void()> f) { f(); }));
    if (GetParam() == StoreTiming::kDeferred) {
      store_ = std::make_unique<DeferredStore>(
          std::move(store_), [this](std::function<void()> f) { boost::asio::post(io_, f); });
    }
    engine_ = std::make_unique<Engine>(io_, *store_, config_, clock_, rng_);
    metrics_ =
        std::make_unique<ServerMetrics>(registry_, io_, *engine_, /*dispatcher=*/nullptr, clock_);
  }
  ~ServerMetricsTest() override {
    metrics_.reset();
    engine_.reset();
  }
  void Push(const std::string& jid) {
    auto job =
        ParseJob(R"({"jid":")" + jid + R"(","jobtype":"t","args":[],"queue":"q"})", clock_.Now());
    ASSERT_TRUE(job.ok());
    engine_->Push(std::move(*job), [](Status s) { EXPECT_TRUE(s.ok()); });
  }

  // Runs the loop until `done()` holds; fails when the loop goes idle first.
  void RunUntil(const std::function<bool()>& done, const std::string& what) {
    io_.restart();
    while (!done()) {
      ASSERT_GT(io_.poll(), 0u) << "the loop went idle before " << what;
    }
  }
  // Runs every handler that is ready, and those they make ready: with the memory store, every
  // store answer due. Leaves the loop ready to run again (poll stops it when it runs out of work).
  void RunReady() {
    io_.restart();
    io_.poll();
    io_.restart();
  }
  // Publishes now and runs the loop until the publication is in.
  void PublishAndWait() {
    bool published = false;
    metrics_->Publish([&published] { published = true; });
    RunUntil([&published] { return published; }, "the publication");
  }

  // Moves the clock by `d` and runs the loop's ready handlers (the timers that fell due).
  void AdvanceAndPoll(Duration d) {
    clock_.Advance(d);
    io_.restart();
    io_.poll();
  }

  Config config_;
  SimulatedClock clock_;  // runs the publication timer
  ScriptedRng rng_;
  boost::asio::io_context io_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Engine> engine_;
  Registry registry_;
  std::unique_ptr<ServerMetrics> metrics_;
};

INSTANTIATE_TEST_SUITE_P(StoreTimings, ServerMetricsTest, kBothTimings, StoreTimingName);

TEST_P(ServerMetricsTest, RegisterPublishesAndPublishRefreshes) {
  Push("metricsjob1");
  ASSERT_TRUE(metrics_->Register().ok());
  RunReady();  // Register's publication is in (a collection before it counts an error)
  Push("metricsjob2");
  RunReady();  // the store has the job
  EXPECT_TRUE(HasLine(RenderPrometheusText(registry_), R"(bulkhead_queue_size{queue="q"} 1)"))
      << "a collection reads the published copy, not the engine";
  PublishAndWait();
  EXPECT_TRUE(HasLine(RenderPrometheusText(registry_), R"(bulkhead_queue_size{queue="q"} 2)"));
}

// PublishEvery (for the StatsD emitter, which collects off the loop) publishes once per interval
// of the clock; once it stops, the figures go stale and missing.
TEST_P(ServerMetricsTest, PublishEveryKeepsTheFiguresFresh) {
  ASSERT_TRUE(metrics_->Register().ok());
  RunReady();
  metrics_->PublishEvery();
  Push("metricsjob1");
  EXPECT_FALSE(HasLine(RenderPrometheusText(registry_), R"(bulkhead_queue_size{queue="q"} 1)"))
      << "not published yet";
  for (int i = 0; i < 5; ++i) AdvanceAndPoll(ServerMetrics::kPublishInterval);
  std::string text = RenderPrometheusText(registry_);
  EXPECT_TRUE(HasLine(text, R"(bulkhead_queue_size{queue="q"} 1)")) << text;
  EXPECT_EQ(text.find("bulkhead_metrics_collect_errors_total{"), std::string::npos)
      << "never older than kMaxSnapshotAge: " << text;

  metrics_->Stop();
  AdvanceAndPoll(ServerMetrics::kMaxSnapshotAge + ServerMetrics::kPublishInterval);
  text = RenderPrometheusText(registry_);
  EXPECT_EQ(text.find("\nbulkhead_queue_size{"), std::string::npos) << "stale: " << text;
}

// The loop thread is stuck in a handler (held on a promise); a collection on this thread still
// answers, with the last published figures, before the loop is released.
TEST_P(ServerMetricsTest, ACollectionNeverWaitsForTheLoop) {
  Push("metricsjob1");
  ASSERT_TRUE(metrics_->Register().ok());
  RunReady();  // Register's publication is in (a collection before it counts an error)
  auto work = boost::asio::make_work_guard(io_);
  std::promise<void> entered;
  std::promise<void> release;
  boost::asio::post(io_, [&] {
    entered.set_value();
    release.get_future().wait();
  });
  std::thread loop([this] { io_.run(); });
  entered.get_future().wait();  // the loop is now blocked until `release`

  std::string text = RenderPrometheusText(registry_);

  release.set_value();
  work.reset();
  boost::asio::post(io_, [this] { metrics_->Stop(); });
  loop.join();
  EXPECT_TRUE(HasLine(text, R"(bulkhead_queue_size{queue="q"} 1)")) << text;
  EXPECT_TRUE(HasLine(text, "bulkhead_jobs_processed_total 0")) << text;
  EXPECT_EQ(text.find("bulkhead_metrics_collect_errors_total{"), std::string::npos) << text;
}

}  // namespace
}  // namespace bulkhead
