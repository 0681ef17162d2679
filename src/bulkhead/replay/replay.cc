#include "bulkhead/replay/replay.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include "bulkhead/replay/replay_chart.h"
#include "bulkhead/replay/replay_scenario.h"
#include "bulkhead/replay/sidekiq_scenario.h"

namespace bulkhead {
namespace {

Status WriteFile(const std::filesystem::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  f.close();
  if (!f) return Status::Internal("cannot write " + path.string());
  return Status::Ok();
}

std::string LoadLine(const ReplayOptions& o) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%.0f timeline jobs/s (1-2 ms CPU, %d worker threads); %.0f Web Push jobs/s, "
                "%.0f%% to a host that %s",
                o.timeline_per_s, o.concurrency, o.webpush_per_s, o.bad_fraction * 100,
                std::string(FaultDescription(o.fault)).c_str());
  return buf;
}

}  // namespace

Result<Pipeline> ParsePipeline(std::string_view name) {
  if (name == "bulkhead") return Pipeline::kBulkhead;
  if (name == "shared-pool") return Pipeline::kSharedPool;
  if (name == "throttled") return Pipeline::kThrottled;
  if (name == "sidekiq") return Pipeline::kSidekiq;
  return Status::InvalidArgument("unknown pipeline \"" + std::string(name) +
                                 "\" (valid: bulkhead, shared-pool, throttled, sidekiq)");
}

Result<std::pair<double, double>> ParseRates(std::string_view text) {
  auto comma = text.find(',');
  if (comma == std::string_view::npos) {
    return Status::InvalidArgument("--rates must be TIMELINE,WEBPUSH (jobs per second), got \"" +
                                   std::string(text) + "\"");
  }
  auto parse = [](std::string_view s, double* out) {
    std::string copy(s);
    char* end = nullptr;
    *out = std::strtod(copy.c_str(), &end);
    return !copy.empty() && end == copy.c_str() + copy.size() && std::isfinite(*out) && *out >= 0;
  };
  double a = 0, b = 0;
  if (!parse(text.substr(0, comma), &a) || !parse(text.substr(comma + 1), &b)) {
    return Status::InvalidArgument("--rates: both rates must be non-negative numbers, got \"" +
                                   std::string(text) + "\"");
  }
  return std::make_pair(a, b);
}

Status ValidateReplayOptions(const ReplayOptions& o) {
  if (o.tls_cert_file.empty() != o.tls_key_file.empty()) {
    return Status::InvalidArgument("--tls-cert-file and --tls-key-file go together");
  }
  if (!(o.duration_s >= 1 && o.duration_s <= 24 * 3600)) {
    return Status::InvalidArgument("--duration must be between 1 and 86400 seconds");
  }
  if (!(o.timeline_per_s > 0 && o.timeline_per_s <= 10'000)) {
    return Status::InvalidArgument("the timeline rate must be > 0 and <= 10000 jobs/s");
  }
  if (!(o.webpush_per_s > 0 && o.webpush_per_s <= 10'000)) {
    return Status::InvalidArgument("the Web Push rate must be > 0 and <= 10000 jobs/s");
  }
  if (!(o.bad_fraction >= 0 && o.bad_fraction < 1)) {
    return Status::InvalidArgument("--bad-fraction must be >= 0 and < 1");
  }
  if (o.concurrency < 1 || o.concurrency > 256) {
    return Status::InvalidArgument("--concurrency must be between 1 and 256");
  }
  if (o.nodes < 1 || o.nodes > 8) return Status::InvalidArgument("--nodes must be between 1 and 8");
  const bool redis = o.store.starts_with("redis://") || o.store.starts_with("rediss://") ||
                     o.store.starts_with("redis-sentinel://");
  if (o.nodes > 1 && !redis) {
    return Status::InvalidArgument(
        "--nodes > 1 needs a store the nodes share: --store redis://HOST:PORT (or rediss://, "
        "redis-sentinel://)");
  }
  if (o.concurrency < o.nodes) {
    return Status::InvalidArgument(
        "--concurrency must be at least --nodes (each node's worker "
        "gets a share of the threads)");
  }
  if (o.pipeline == Pipeline::kSidekiq &&
      (o.nodes > 1 || !o.store.empty() || o.baseline || !o.tls_cert_file.empty())) {
    return Status::InvalidArgument(
        "--pipeline sidekiq runs its own pair of runs on one embedded store: --store, --nodes, "
        "--baseline and TLS do not apply");
  }
  if (o.fault == Fault::kNone) {
    return Status::InvalidArgument("--fault none has nothing to replay; use --baseline to compare");
  }
  return Status::Ok();
}

namespace {

// The lines that say what the replay runs.
void PrintReplayHeader(const ReplayOptions& options, std::ostream& out) {
  out << "bulkhead replay: " << options.duration_s << " s of " << LoadLine(options) << "\n";
  if (options.nodes > 1 || !options.store.empty()) {
    // The scheme only: a Redis URL may carry a password.
    out << "store: "
        << (options.store.empty() ? "embedded" : options.store.substr(0, options.store.find(':')))
        << ", " << options.nodes << (options.nodes == 1 ? " node" : " nodes")
        << " (the load and the worker threads spread over them)\n";
  }
  if (options.pipeline == Pipeline::kSharedPool) {
    out << "pipeline: shared pool (the worker threads make the push requests and wait, as "
           "Mastodon on Sidekiq does)\n";
  }
  if (options.pipeline == Pipeline::kSidekiq) {
    out << "pipeline: sidekiq (a real Sidekiq process, " << options.concurrency
        << " threads on queue default, and redis-server), twice: the pushes made by the Sidekiq "
           "threads (2019), then handed to bulkhead through its Sidekiq bridge\n";
  }
  if (options.pipeline == Pipeline::kThrottled) {
    out << "pipeline: throttled (the worker threads make the push requests and wait, the pushes in "
           "queue `push` throttled to concurrency = "
        << kThrottledPushConcurrency << ", the worker fetching default, push)\n";
  }
}

// replay.svg, replay.csv, summary.json and (with a baseline) baseline.csv in `dir`.
Status WriteReplayFiles(const std::filesystem::path& dir, const ScenarioResult& run,
                        const ScenarioResult* base, const std::vector<Verdict>& verdicts,
                        const ReplayChartOptions& chart) {
  auto points = PerSecond(run);
  for (Status w : {WriteFile(dir / "replay.svg", RenderReplayChart(points, chart)),
                   WriteFile(dir / "replay.csv", FormatCsv(points)),
                   WriteFile(dir / "summary.json", FormatSummaryJson(run, base, verdicts))}) {
    if (!w.ok()) return w;
  }
  if (base != nullptr) (void)WriteFile(dir / "baseline.csv", FormatCsv(PerSecond(*base)));
  return Status::Ok();
}

}  // namespace

namespace {

ReplayChartOptions ChartOptions(const ReplayOptions& options, const ScenarioResult& run,
                                double latency_bound_ms) {
  ReplayChartOptions chart;
  chart.title = "bulkhead replay: " + run.name + ", " +
                std::to_string(static_cast<int>(options.duration_s)) + " s";
  chart.subtitle = LoadLine(options);
  chart.latency_bound_ms = latency_bound_ms;
  return chart;
}

// Pipeline::kSidekiq: the 2019 run, then the bridged one, side by side.
int RunSidekiqReplay(const ReplayOptions& options, std::ostream& out, std::ostream& err) {
  ReplayThresholds th = options.thresholds;
  th.timeline_p99_ms = kSidekiqTimelineP99Ms;
  struct Leg {
    SidekiqPush push;
    const char* dir;
    std::optional<ScenarioResult> run;
    std::vector<Verdict> verdicts;
  };
  Leg legs[] = {{SidekiqPush::kInline, "sidekiq-2019", {}, {}},
                {SidekiqPush::kBridge, "sidekiq-bulkhead", {}, {}}};
  for (Leg& leg : legs) {
    auto run = RunSidekiqScenario(options, options.fault, leg.push, err);
    if (!run.ok()) {
      err << "bulkhead replay: " << run.status().message() << "\n";
      return 2;
    }
    leg.run = std::move(*run);
    leg.verdicts = Verdicts(*leg.run, nullptr, th);
    std::filesystem::path dir = std::filesystem::path(options.out_dir) / leg.dir;
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    Status w = WriteReplayFiles(dir, *leg.run, nullptr, leg.verdicts,
                                ChartOptions(options, *leg.run, th.timeline_p99_ms));
    if (!w.ok()) {
      err << "bulkhead replay: " << w.message() << "\n";
      return 2;
    }
  }
  out << "\n" << FormatColumns({&*legs[0].run, &*legs[1].run});
  for (const Leg& leg : legs) {
    out << "\n" << leg.run->name << ":\n";
    for (const auto& v : leg.verdicts) out << (v.pass ? "PASS  " : "FAIL  ") << v.text << "\n";
  }
  // The first verdict is the timeline p99 bound: the 2019 run must break it, as the incident did.
  const bool reproduced = !legs[0].verdicts.empty() && !legs[0].verdicts[0].pass;
  const bool cured = AllPass(legs[1].verdicts);
  out << "\nthe 2019 way " << (reproduced ? "stalled, as in the incident" : "did NOT stall")
      << "; handed to bulkhead: " << (cured ? "every verdict passes" : "a verdict FAILS") << "\n";
  for (const Leg& leg : legs) {
    out << "chart: " << (std::filesystem::path(options.out_dir) / leg.dir / "replay.svg").string()
        << "\n";
  }
  return reproduced && cured ? 0 : 1;
}

}  // namespace

int RunReplay(const ReplayOptions& options, std::ostream& out, std::ostream& err) {
  Status s = ValidateReplayOptions(options);
  if (!s.ok()) {
    err << "bulkhead replay: " << s.message() << "\n";
    return 2;
  }
  std::error_code ec;
  std::filesystem::create_directories(options.out_dir, ec);
  if (ec) {
    err << "bulkhead replay: cannot create " << options.out_dir << ": " << ec.message() << "\n";
    return 2;
  }
  PrintReplayHeader(options, out);
  if (options.pipeline == Pipeline::kSidekiq) return RunSidekiqReplay(options, out, err);

  std::optional<ScenarioResult> baseline;
  if (options.baseline) {
    auto r = RunScenario(options, Fault::kNone, "baseline", err);
    if (!r.ok()) {
      err << "bulkhead replay: baseline: " << r.status().message() << "\n";
      return 2;
    }
    baseline = std::move(*r);
  }
  auto run = RunScenario(options, options.fault, std::string(FaultName(options.fault)), err);
  if (!run.ok()) {
    err << "bulkhead replay: " << run.status().message() << "\n";
    return 2;
  }
  const ScenarioResult* base = baseline ? &*baseline : nullptr;

  auto verdicts = Verdicts(*run, base, options.thresholds);
  std::filesystem::path dir(options.out_dir);
  if (Status w = WriteReplayFiles(dir, *run, base, verdicts,
                                  ChartOptions(options, *run, options.thresholds.timeline_p99_ms));
      !w.ok()) {
    err << "bulkhead replay: " << w.message() << "\n";
    return 2;
  }

  out << "\n" << FormatTable(*run, base) << "\n";
  for (const auto& v : verdicts) out << (v.pass ? "PASS  " : "FAIL  ") << v.text << "\n";
  out << "\nchart: " << (dir / "replay.svg").string()
      << "  per second: " << (dir / "replay.csv").string()
      << "  summary: " << (dir / "summary.json").string() << "\n";
  return AllPass(verdicts) ? 0 : 1;
}

}  // namespace bulkhead
