#include "bulkhead/metrics/registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cmath>
#include <condition_variable>
#include <sstream>
#include <thread>

#include "bulkhead/metrics/metric_names.h"

namespace bulkhead {
namespace {

using ::testing::ElementsAre;
using ::testing::SizeIs;

const FamilySnapshot* Find(const std::vector<FamilySnapshot>& snaps, std::string_view name) {
  for (const auto& f : snaps) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

TEST(RegistryTest, UnlabelledCounterIsExportedAtZeroFromRegistration) {
  Registry registry;
  auto c = registry.AddCounter("jobs_total", "Jobs.");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto snaps = registry.Collect();
  const FamilySnapshot* f = Find(snaps, "jobs_total");
  ASSERT_NE(f, nullptr);
  ASSERT_THAT(f->samples, SizeIs(1));
  EXPECT_EQ(f->samples[0].value, 0);
  (*c)->Get().Increment();
  (*c)->Get().Increment(2.5);
  (*c)->Get().Increment(-7);  // ignored: counters never go down
  EXPECT_EQ((*c)->Get().Value(), 3.5);
}

TEST(RegistryTest, LabelledFamilyWithoutChildrenIsLeftOut) {
  Registry registry;
  ASSERT_TRUE(registry.AddGauge("queue_size", "Q.", {"queue"}).ok());
  EXPECT_EQ(Find(registry.Collect(), "queue_size"), nullptr);
}

TEST(RegistryTest, ChildrenAreSortedByLabelValuesAndReferencesAreStable) {
  Registry registry;
  GaugeFamily* g = *registry.AddGauge("queue_size", "Q.", {"queue"});
  Gauge& push = g->WithLabels({"push"});
  g->WithLabels({"default"}).Set(3);
  push.Set(7);
  EXPECT_EQ(&g->WithLabels({"push"}), &push);
  push.Add(1);
  push.Sub(0.5);
  auto snaps = registry.Collect();
  const FamilySnapshot* f = Find(snaps, "queue_size");
  ASSERT_NE(f, nullptr);
  ASSERT_THAT(f->samples, SizeIs(2));
  EXPECT_THAT(f->samples[0].label_values, ElementsAre("default"));
  EXPECT_EQ(f->samples[0].value, 3);
  EXPECT_THAT(f->samples[1].label_values, ElementsAre("push"));
  EXPECT_EQ(f->samples[1].value, 7.5);
}

TEST(RegistryTest, AnExtraLabelGoesOnTheFamiliesItAppliesToOnly) {
  Registry registry;
  GaugeFamily* mine = *registry.AddGauge("connections", "C.", {"listener"});
  mine->WithLabels({"http"}).Set(2);
  mine->WithLabels({"faktory"}).Set(5);
  (*registry.AddCounter("queue_total", "Q."))->Get().Increment();
  const std::vector<double> bounds = {0.1, 1};
  HistogramFamily* runtime = *registry.AddHistogram("runtime_seconds", "R.", {}, bounds);
  runtime->Get().Observe(0.5);
  ASSERT_TRUE(registry
                  .AddCallbackGauge("workers", "W.", {},
                                    []() -> Result<std::vector<MetricSample>> {
                                      return std::vector<MetricSample>{{{}, 3}};
                                    })
                  .ok());
  EXPECT_FALSE(registry.SetExtraLabel("no-dash", "a", [](std::string_view) { return true; }).ok());
  ASSERT_TRUE(registry
                  .SetExtraLabel("node", "host-1-abc",
                                 [](std::string_view family) { return family != "queue_total"; })
                  .ok());

  auto snaps = registry.Collect();
  const FamilySnapshot* c = Find(snaps, "connections");
  ASSERT_NE(c, nullptr);
  EXPECT_THAT(c->label_names, ElementsAre("listener", "node"));
  ASSERT_THAT(c->samples, SizeIs(2));
  EXPECT_THAT(c->samples[0].label_values, ElementsAre("faktory", "host-1-abc"));
  EXPECT_THAT(c->samples[1].label_values, ElementsAre("http", "host-1-abc"));
  const FamilySnapshot* q = Find(snaps, "queue_total");
  ASSERT_NE(q, nullptr);
  EXPECT_TRUE(q->label_names.empty());
  EXPECT_TRUE(q->samples[0].label_values.empty());
  const FamilySnapshot* r = Find(snaps, "runtime_seconds");
  ASSERT_NE(r, nullptr);
  EXPECT_THAT(r->label_names, ElementsAre("node"));
  EXPECT_THAT(r->histograms[0].label_values, ElementsAre("host-1-abc"));
  const FamilySnapshot* w = Find(snaps, "workers");
  ASSERT_NE(w, nullptr);
  EXPECT_THAT(w->samples[0].label_values, ElementsAre("host-1-abc"));
}

TEST(RegistryTest, ReRegisteringTheSameDefinitionReturnsTheSameFamily) {
  Registry registry;
  auto a = registry.AddCounter("x_total", "X.", {"host"});
  auto b = registry.AddCounter("x_total", "X.", {"host"});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(registry.AddCounter("x_total", "X.", {"queue"}).status().code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ(registry.AddGauge("x_total", "X.", {"host"}).status().code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ(registry
                .AddCallbackGauge(
                    "x_total", "X.", {},
                    [] { return Result<std::vector<MetricSample>>(std::vector<MetricSample>{}); })
                .code(),
            StatusCode::kAlreadyExists);
  const double b1[] = {1, 2};
  const double b2[] = {1, 3};
  ASSERT_TRUE(registry.AddHistogram("h", "H.", {}, b1).ok());
  EXPECT_TRUE(registry.AddHistogram("h", "H.", {}, b1).ok());
  EXPECT_EQ(registry.AddHistogram("h", "H.", {}, b2).status().code(), StatusCode::kAlreadyExists);
}

TEST(RegistryTest, RejectsInvalidNamesAndBuckets) {
  Registry registry;
  EXPECT_EQ(registry.AddCounter("1abc", "").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.AddCounter("a-b", "").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.AddCounter("ok", "", {"__reserved"}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.AddCounter("ok", "", {"a:b"}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.AddCounter("ok", "", {"a", "a"}).status().code(),
            StatusCode::kInvalidArgument);
  const double bounds[] = {1};
  EXPECT_EQ(registry.AddHistogram("h", "", {"le"}, bounds).status().code(),
            StatusCode::kInvalidArgument);
  const double unsorted[] = {1, 1};
  EXPECT_EQ(registry.AddHistogram("h", "", {}, unsorted).status().code(),
            StatusCode::kInvalidArgument);
  const double nan[] = {std::nan("")};
  EXPECT_EQ(registry.AddHistogram("h", "", {}, nan).status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(IsValidMetricName("bulkhead:rule_1"));
  EXPECT_TRUE(IsValidLabelName("_x9"));
}

TEST(HistogramTest, BucketsAreInclusiveUpperBoundsAndCumulative) {
  Histogram h({0.1, 1, 10});
  for (double v : {0.05, 0.1, 0.5, 1.0, 20.0, 5.0}) h.Observe(v);
  h.Observe(std::nan(""));  // ignored
  HistogramSnapshot s = h.Snapshot();
  EXPECT_THAT(s.cumulative_counts, ElementsAre(2, 4, 5, 6));
  EXPECT_EQ(s.count, 6u);
  EXPECT_DOUBLE_EQ(s.sum, 26.65);
}

TEST(RegistryTest, TrailingInfBoundIsDropped) {
  Registry registry;
  const double bounds[] = {1, 2, INFINITY};
  HistogramFamily* h = *registry.AddHistogram("h", "", {}, bounds);
  EXPECT_THAT(h->Get().Snapshot().upper_bounds, ElementsAre(1, 2));
}

TEST(RegistryTest, CallbackGaugeIsEvaluatedAtEveryCollection) {
  Registry registry;
  int calls = 0;
  double oldest_age = 0.5;
  ASSERT_TRUE(registry
                  .AddCallbackGauge(
                      metric_names::kQueueLatencySeconds, "Latency.", {"queue"},
                      [&]() -> Result<std::vector<MetricSample>> {
                        ++calls;
                        return std::vector<MetricSample>{{{"push"}, oldest_age}, {{"default"}, 0}};
                      })
                  .ok());
  auto first = registry.Collect();
  oldest_age = 60;  // nobody "updates" the gauge: the next scrape simply sees the new age
  auto second = registry.Collect();
  EXPECT_EQ(calls, 2);
  const FamilySnapshot* f = Find(second, metric_names::kQueueLatencySeconds);
  ASSERT_NE(f, nullptr);
  ASSERT_THAT(f->samples, SizeIs(2));
  EXPECT_THAT(f->samples[0].label_values, ElementsAre("default"));  // sorted
  EXPECT_EQ(f->samples[1].value, 60);
}

TEST(RegistryTest, AFamilyThatKeepsFailingIsLoggedOncePerMinuteAndCountedEveryTime) {
  std::ostringstream log;
  auto saved = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(log)));
  Registry registry;
  ASSERT_TRUE(registry
                  .AddCallbackGauge("bulkhead_queue_size", "Q.", {},
                                    []() -> Result<std::vector<MetricSample>> {
                                      return Status::Unavailable("store unavailable");
                                    })
                  .ok());
  std::vector<FamilySnapshot> snaps;
  for (int i = 0; i < 5; ++i) snaps = registry.Collect();
  spdlog::set_default_logger(saved);
  std::string text = log.str();
  size_t lines = 0;
  for (size_t at = text.find("collecting bulkhead_queue_size failed"); at != std::string::npos;
       at = text.find("collecting bulkhead_queue_size failed", at + 1)) {
    ++lines;
  }
  EXPECT_EQ(lines, 1u) << text;
  const FamilySnapshot* errors = Find(snaps, metric_names::kMetricsCollectErrorsTotal);
  ASSERT_NE(errors, nullptr);
  EXPECT_EQ(errors->samples[0].value, 5) << "every failure is counted";
}

TEST(RegistryTest, FailingCallbackIsOmittedAndCounted) {
  Registry registry;
  bool fail = true;
  ASSERT_TRUE(registry
                  .AddCallbackGauge("bulkhead_retry_set_size", "R.", {},
                                    [&]() -> Result<std::vector<MetricSample>> {
                                      if (fail) return Status::Unavailable("redis down");
                                      return std::vector<MetricSample>{{{}, 4}};
                                    })
                  .ok());
  auto snaps = registry.Collect();
  EXPECT_EQ(Find(snaps, "bulkhead_retry_set_size"), nullptr) << "a failed figure is not frozen";
  const FamilySnapshot* errors = Find(snaps, metric_names::kMetricsCollectErrorsTotal);
  ASSERT_NE(errors, nullptr) << "the failure shows in the same scrape";
  ASSERT_THAT(errors->samples, SizeIs(1));
  EXPECT_THAT(errors->samples[0].label_values, ElementsAre("bulkhead_retry_set_size"));
  EXPECT_EQ(errors->samples[0].value, 1);
  fail = false;
  snaps = registry.Collect();
  ASSERT_NE(Find(snaps, "bulkhead_retry_set_size"), nullptr);
  // Families stay sorted by name with the error counter inserted in place.
  for (size_t i = 1; i < snaps.size(); ++i) EXPECT_LT(snaps[i - 1].name, snaps[i].name);
}

TEST(RegistryTest, CallbackWithWrongArityOrDuplicatesIsAnError) {
  Registry registry;
  ASSERT_TRUE(registry
                  .AddCallbackGauge("a", "", {"queue"},
                                    []() -> Result<std::vector<MetricSample>> {
                                      return std::vector<MetricSample>{{{}, 1}};
                                    })
                  .ok());
  ASSERT_TRUE(registry
                  .AddCallbackGauge("b", "", {"queue"},
                                    []() -> Result<std::vector<MetricSample>> {
                                      return std::vector<MetricSample>{{{"q"}, 1}, {{"q"}, 2}};
                                    })
                  .ok());
  auto snaps = registry.Collect();
  EXPECT_EQ(Find(snaps, "a"), nullptr);
  EXPECT_EQ(Find(snaps, "b"), nullptr);
  const FamilySnapshot* errors = Find(snaps, metric_names::kMetricsCollectErrorsTotal);
  ASSERT_NE(errors, nullptr);
  EXPECT_THAT(errors->samples, SizeIs(2));
}

TEST(RegistryTest, RemoveCallbackWaitsForARunningCallback) {
  Registry registry;
  std::mutex mu;
  std::condition_variable cv;
  bool in_callback = false;
  bool release = false;
  std::atomic<int> calls{0};
  ASSERT_TRUE(registry
                  .AddCallbackGauge("g", "", {},
                                    [&]() -> Result<std::vector<MetricSample>> {
                                      ++calls;
                                      std::unique_lock<std::mutex> lock(mu);
                                      in_callback = true;
                                      cv.notify_all();
                                      cv.wait(lock, [&] { return release; });
                                      return std::vector<MetricSample>{{{}, 1}};
                                    })
                  .ok());
  std::thread scraper([&] { (void)registry.Collect(); });
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return in_callback; }))
        << "the scraper never entered the callback";
  }
  std::atomic<bool> removed{false};
  std::thread remover([&] {
    EXPECT_TRUE(registry.RemoveCallback("g").ok());
    removed = true;
  });
  // The remover cannot finish while the callback runs; let the callback finish, then join.
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_FALSE(removed.load());  // may race to true only after release, checked under mu
    release = true;
  }
  cv.notify_all();
  scraper.join();
  remover.join();
  EXPECT_TRUE(removed.load());
  EXPECT_EQ(Find(registry.Collect(), "g"), nullptr);
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(registry.RemoveCallback("g").code(), StatusCode::kNotFound);
}

TEST(RegistryTest, ConcurrentUpdatesAreNotLost) {
  Registry registry;
  CounterFamily* c = *registry.AddCounter("c_total", "", {"host"});
  const double bounds[] = {1};
  HistogramFamily* h = *registry.AddHistogram("h_seconds", "", {}, bounds);
  constexpr int kThreads = 4;
  constexpr int kPerThread = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        c->WithLabels({i % 2 == 0 ? "a" : "b"}).Increment();
        h->Get().Observe(t % 2 == 0 ? 0.5 : 2.0);
        if (i % 1000 == 0) (void)registry.Collect();  // scrapes race with updates
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(c->WithLabels({"a"}).Value() + c->WithLabels({"b"}).Value(), kThreads * kPerThread);
  HistogramSnapshot s = h->Get().Snapshot();
  EXPECT_EQ(s.count, static_cast<uint64_t>(kThreads * kPerThread));
  EXPECT_EQ(s.cumulative_counts[0], static_cast<uint64_t>(kThreads / 2 * kPerThread));
}

}  // namespace
}  // namespace bulkhead
