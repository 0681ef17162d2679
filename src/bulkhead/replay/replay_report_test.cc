#include "bulkhead/replay/replay_report.h"

#include <gtest/gtest.h>

#include "bulkhead/replay/replay.h"

namespace bulkhead {
namespace {

constexpr int64_t kT0 = 1'000'000'000;

// A run whose timeline jobs waited `wait_ms[i]` each (created one per 20 ms), with `healthy`
// deliveries that took 5 ms each and `late` that never arrived.
ScenarioResult MakeRun(const std::vector<double>& wait_ms, int healthy = 100, int late = 0) {
  ScenarioResult r;
  r.name = "blackhole";
  r.fault = Fault::kBlackhole;
  r.duration_s = 3;
  r.t0_us = kT0;
  for (size_t i = 0; i < wait_ms.size(); ++i) {
    int64_t created = kT0 + static_cast<int64_t>(i) * 20'000;
    int64_t start = created + static_cast<int64_t>(wait_ms[i] * 1000);
    r.timeline.push_back({created, start, start + 1500});
  }
  r.timeline_enqueued = static_cast<int64_t>(wait_ms.size());
  for (int i = 0; i < healthy; ++i) {
    int64_t pushed = kT0 + i * 10'000;
    r.healthy.push_back(
        {pushed, i < healthy - late ? std::optional<int64_t>(pushed + 5000) : std::nullopt});
  }
  return r;
}

const Verdict* Find(const std::vector<Verdict>& v, const std::string& prefix) {
  for (const auto& x : v) {
    if (x.text.rfind(prefix, 0) == 0) return &x;
  }
  return nullptr;
}

TEST(ReplayReportTest, SummarizeUsesNearestRank) {
  std::vector<double> v;
  for (int i = 1; i <= 200; ++i) v.push_back(i);
  LatencySummary s = Summarize(v);
  EXPECT_EQ(s.count, 200u);
  EXPECT_DOUBLE_EQ(s.p50_ms, 100);
  EXPECT_DOUBLE_EQ(s.p99_ms, 198);
  EXPECT_DOUBLE_EQ(s.max_ms, 200);
  EXPECT_EQ(Summarize({}).count, 0u);
}

TEST(ReplayReportTest, AHealthyRunPassesEveryVerdict) {
  auto run = MakeRun(std::vector<double>(100, 2.0));
  auto verdicts = Verdicts(run, nullptr);
  EXPECT_TRUE(AllPass(verdicts));
  EXPECT_EQ(verdicts.size(), 4u);  // no baseline verdict without a baseline
}

TEST(ReplayReportTest, TimelineP99AboveTheBoundFails) {
  std::vector<double> waits(100, 2.0);
  waits[98] = 60;
  waits[99] = 61;  // two of 100 above 50 ms: the p99 is 60 ms
  auto verdicts = Verdicts(MakeRun(waits), nullptr);
  const Verdict* v = Find(verdicts, "timeline p99 60.0 ms <= 50.0 ms");
  ASSERT_NE(v, nullptr);
  EXPECT_FALSE(v->pass);
  EXPECT_FALSE(AllPass(verdicts));
}

TEST(ReplayReportTest, BaselineRatioUsesTheNoiseFloor) {
  auto baseline = MakeRun(std::vector<double>(100, 1.0));
  baseline.name = "baseline";
  // 8 ms against a 1 ms baseline: 8x the baseline, but under 2 x the 5 ms floor.
  auto verdicts = Verdicts(MakeRun(std::vector<double>(100, 8.0)), &baseline);
  ASSERT_EQ(verdicts.size(), 5u);
  EXPECT_TRUE(verdicts[1].pass) << verdicts[1].text;
  EXPECT_NE(verdicts[1].text.find("floor"), std::string::npos);
  // 30 ms against a 10 ms baseline: 3x, fails.
  auto slow_baseline = MakeRun(std::vector<double>(100, 10.0));
  verdicts = Verdicts(MakeRun(std::vector<double>(100, 30.0)), &slow_baseline);
  EXPECT_FALSE(verdicts[1].pass) << verdicts[1].text;
  EXPECT_NE(verdicts[1].text.find("ratio 3.00"), std::string::npos) << verdicts[1].text;
}

TEST(ReplayReportTest, HealthyDeliveriesThatNeverArriveCountAsLate) {
  auto verdicts = Verdicts(MakeRun(std::vector<double>(100, 2.0), 100, 2), nullptr);
  const Verdict* v = Find(verdicts, "healthy deliveries under 1000 ms: 98 of 100");
  ASSERT_NE(v, nullptr);
  EXPECT_FALSE(v->pass);
  verdicts = Verdicts(MakeRun(std::vector<double>(100, 2.0), 100, 1), nullptr);
  EXPECT_TRUE(Find(verdicts, "healthy deliveries under 1000 ms: 99 of 100")->pass);
}

TEST(ReplayReportTest, UnrunTimelineJobsAndForeignJobsFail) {
  auto run = MakeRun(std::vector<double>(10, 1.0));
  run.timeline_enqueued = 11;
  run.foreign_jobs = 1;
  auto verdicts = Verdicts(run, nullptr);
  EXPECT_FALSE(Find(verdicts, "timeline jobs run 10 of 11 enqueued")->pass);
  EXPECT_FALSE(Find(verdicts, "delivery jobs handed to the timeline worker: 1")->pass);
}

TEST(ReplayReportTest, JobsThatNeverRanCountWithTheirWaitSoFar) {
  auto run = MakeRun(std::vector<double>(10, 1.0));
  run.timeline_enqueued = 12;
  run.end_us = kT0 + 3'000'000;
  run.timeline_unrun_created_us = {kT0 + 1'000'000, kT0 + 2'000'000};
  LatencySummary s = Summarize(TimelineLatenciesMs(run));
  EXPECT_EQ(s.count, 12u);
  EXPECT_DOUBLE_EQ(s.max_ms, 2000);  // waited at least 2 s when the run ended
  EXPECT_FALSE(Verdicts(run, nullptr)[0].pass);
}

TEST(ReplayReportTest, AnEmptyRunFails) {
  ScenarioResult empty;
  empty.duration_s = 1;
  EXPECT_FALSE(AllPass(Verdicts(empty, nullptr)));
}

TEST(ReplayReportTest, PerSecondBucketsByStartAndCarriesSamplesForward) {
  std::vector<double> waits(51, 1.0);
  waits[10] = 40;  // created at 0.20 s, started at 0.24 s
  waits[49] = 30;  // created at 0.98 s, started at 1.01 s
  waits[50] = 7;   // created at 1.00 s
  auto run = MakeRun(waits);
  ServerSample a{.t_s = 0.2, .retry_set = 3, .faulty_parked = 1, .faulty_breaker = "closed"};
  ServerSample b{.t_s = 2.5,
                 .retry_set = 9,
                 .faulty_parked = 4,
                 .queue_latency_ms = 900,
                 .faulty_breaker = "open"};
  run.samples = {a, b};
  auto points = PerSecond(run);
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[0].retry_set, 3);
  EXPECT_EQ(points[1].retry_set, 3);  // no sample in second 1: carried forward
  EXPECT_EQ(points[2].retry_set, 9);
  EXPECT_EQ(points[2].faulty_parked, 4);
  EXPECT_DOUBLE_EQ(*points[0].timeline_max_ms, 40);
  EXPECT_DOUBLE_EQ(*points[1].timeline_max_ms, 30);
  EXPECT_FALSE(points[2].timeline_p99_ms.has_value());
  EXPECT_DOUBLE_EQ(*TimelineQueueLatencyMs(points[2]), 900);  // no job started: the sampled age
  EXPECT_DOUBLE_EQ(*TimelineQueueLatencyMs(points[1]), 30);
  EXPECT_DOUBLE_EQ(*points[0].healthy_p99_ms, 5);
  std::string csv = FormatCsv(points);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "second,retry_set,faulty_parked,queue_latency_ms,timeline_p99_ms,timeline_max_ms,"
            "healthy_p99_ms,healthy_missing");
  EXPECT_NE(csv.find("\n2,9,4,900.000,,,,0\n"), std::string::npos) << csv;
}

TEST(ReplayReportTest, TableHasOneColumnPerRunAndTheRatio) {
  auto baseline = MakeRun(std::vector<double>(100, 2.0));
  baseline.name = "baseline";
  auto run = MakeRun(std::vector<double>(100, 3.0));
  run.samples = {{.t_s = 1,
                  .retry_set = 12,
                  .dead_set = 1,
                  .faulty_parked = 30,
                  .faulty_failures = 5,
                  .faulty_breaker = "open"}};
  std::string table = FormatTable(run, &baseline);
  EXPECT_NE(table.find("baseline"), std::string::npos);
  EXPECT_NE(table.find("blackhole"), std::string::npos);
  EXPECT_NE(table.find("retry set size max"), std::string::npos);
  EXPECT_NE(table.find("30 / 30"), std::string::npos) << table;  // parked max / end
  EXPECT_NE(table.find("1.50"), std::string::npos) << table;     // 3 ms / 2 ms
  std::string json = FormatSummaryJson(run, &baseline, Verdicts(run, &baseline));
  EXPECT_NE(json.find("\"pass\": true"), std::string::npos) << json;
}

TEST(ReplayReportTest, ColumnsPutRunsSideBySideWithoutARatio) {
  auto old_way = MakeRun(std::vector<double>(100, 4000.0));
  old_way.name = "blackhole (Sidekiq, 2019)";
  auto bridged = MakeRun(std::vector<double>(100, 3.0));
  bridged.name = "blackhole (Sidekiq + bulkhead)";
  std::string table = FormatColumns({&old_way, &bridged});
  EXPECT_LT(table.find("(Sidekiq, 2019)"), table.find("(Sidekiq + bulkhead)")) << table;
  EXPECT_NE(table.find("4000.0 / 4000.0"), std::string::npos) << table;
  EXPECT_EQ(table.find("ratio"), std::string::npos) << table;
  EXPECT_EQ(FormatColumns({&bridged}), FormatTable(bridged, nullptr));
}

TEST(ReplayOptionsTest, RatesAndRanges) {
  auto rates = ParseRates("50,20");
  ASSERT_TRUE(rates.ok());
  EXPECT_DOUBLE_EQ(rates->first, 50);
  EXPECT_DOUBLE_EQ(rates->second, 20);
  EXPECT_FALSE(ParseRates("50").ok());
  EXPECT_FALSE(ParseRates("50,x").ok());
  EXPECT_FALSE(ParseRates("-1,20").ok());
  ReplayOptions o;
  EXPECT_TRUE(ValidateReplayOptions(o).ok());
  o.bad_fraction = 1;
  EXPECT_NE(ValidateReplayOptions(o).message().find("--bad-fraction"), std::string::npos);
  o = {};
  o.duration_s = 0;
  EXPECT_NE(ValidateReplayOptions(o).message().find("--duration"), std::string::npos);
  o = {};
  o.fault = Fault::kNone;
  EXPECT_FALSE(ValidateReplayOptions(o).ok());
  EXPECT_EQ(*ParsePipeline("shared-pool"), Pipeline::kSharedPool);
  EXPECT_EQ(*ParsePipeline("bulkhead"), Pipeline::kBulkhead);
  EXPECT_EQ(*ParsePipeline("throttled"), Pipeline::kThrottled);
  EXPECT_EQ(*ParsePipeline("sidekiq"), Pipeline::kSidekiq);
  EXPECT_NE(ParsePipeline("resque").status().message().find(
                "valid: bulkhead, shared-pool, throttled, sidekiq"),
            std::string::npos);
}

}  // namespace
}  // namespace bulkhead
