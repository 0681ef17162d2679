#include "bulkhead/replay/replay_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

namespace bulkhead {
namespace {

std::string Fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string Ms(double v) { return Fmt(v < 10 ? "%.2f" : "%.1f", v); }

double NearestRank(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

int64_t MaxOf(const ScenarioResult& r, int64_t ServerSample::*field) {
  int64_t m = 0;
  for (const auto& s : r.samples) m = std::max(m, s.*field);
  return m;
}

int64_t LastOf(const ScenarioResult& r, int64_t ServerSample::*field) {
  return r.samples.empty() ? 0 : r.samples.back().*field;
}

size_t HealthyOnTime(const ScenarioResult& r, double within_ms) {
  size_t n = 0;
  for (const auto& d : r.healthy) {
    if (d.arrived_us && static_cast<double>(*d.arrived_us - d.pushed_us) / 1000.0 <= within_ms) ++n;
  }
  return n;
}

size_t HealthyArrived(const ScenarioResult& r) {
  return static_cast<size_t>(std::count_if(r.healthy.begin(), r.healthy.end(),
                                           [](const DeliveryRecord& d) { return d.arrived_us; }));
}

}  // namespace

LatencySummary Summarize(std::vector<double> ms) {
  LatencySummary s;
  s.count = ms.size();
  if (ms.empty()) return s;
  std::sort(ms.begin(), ms.end());
  s.p50_ms = NearestRank(ms, 0.50);
  s.p99_ms = NearestRank(ms, 0.99);
  s.max_ms = ms.back();
  return s;
}

std::vector<double> TimelineLatenciesMs(const ScenarioResult& r) {
  std::vector<double> v;
  v.reserve(r.timeline.size());
  for (const auto& t : r.timeline)
    v.push_back(static_cast<double>(t.start_us - t.created_us) / 1000.0);
  for (int64_t c : r.timeline_unrun_created_us)
    v.push_back(static_cast<double>(r.end_us - c) / 1000.0);
  return v;
}

std::vector<double> HealthyLatenciesMs(const ScenarioResult& r) {
  std::vector<double> v;
  for (const auto& d : r.healthy) {
    if (d.arrived_us) v.push_back(static_cast<double>(*d.arrived_us - d.pushed_us) / 1000.0);
  }
  return v;
}

std::vector<Verdict> Verdicts(const ScenarioResult& run, const ScenarioResult* baseline,
                              const ReplayThresholds& th) {
  std::vector<Verdict> out;
  LatencySummary tl = Summarize(TimelineLatenciesMs(run));
  out.push_back({tl.count > 0 && tl.p99_ms <= th.timeline_p99_ms,
                 "timeline p99 " + Ms(tl.p99_ms) + " ms <= " + Ms(th.timeline_p99_ms) + " ms"});
  if (baseline != nullptr) {
    LatencySummary bl = Summarize(TimelineLatenciesMs(*baseline));
    double denominator = std::max(bl.p99_ms, th.ratio_floor_ms);
    double ratio = tl.p99_ms / denominator;
    std::string text = "timeline p99 " + Ms(tl.p99_ms) +
                       " ms <= " + Fmt("%.1f", th.baseline_ratio) + " x baseline p99 " +
                       Ms(bl.p99_ms) + " ms";
    if (bl.p99_ms < th.ratio_floor_ms) text += " (floor " + Ms(th.ratio_floor_ms) + " ms)";
    text += ": ratio " + Fmt("%.2f", tl.p99_ms / std::max(bl.p99_ms, 1e-3));
    out.push_back({tl.count > 0 && bl.count > 0 && ratio <= th.baseline_ratio, text});
  }
  size_t ran = run.timeline.size();
  out.push_back({static_cast<int64_t>(ran) == run.timeline_enqueued && ran > 0,
                 "timeline jobs run " + std::to_string(ran) + " of " +
                     std::to_string(run.timeline_enqueued) + " enqueued"});
  size_t on_time = HealthyOnTime(run, th.healthy_within_ms);
  double fraction = run.healthy.empty() ? 0 : static_cast<double>(on_time) / run.healthy.size();
  out.push_back({!run.healthy.empty() && fraction >= th.healthy_on_time_fraction,
                 "healthy deliveries under " + Fmt("%.0f", th.healthy_within_ms) +
                     " ms: " + std::to_string(on_time) + " of " +
                     std::to_string(run.healthy.size()) + " (" + Fmt("%.2f", fraction * 100) +
                     "% >= " + Fmt("%.0f", th.healthy_on_time_fraction * 100) + "%)"});
  out.push_back({run.foreign_jobs == 0, "delivery jobs handed to the timeline worker: " +
                                            std::to_string(run.foreign_jobs)});
  return out;
}

bool AllPass(const std::vector<Verdict>& verdicts) {
  return std::all_of(verdicts.begin(), verdicts.end(), [](const Verdict& v) { return v.pass; });
}

std::vector<SecondPoint> PerSecond(const ScenarioResult& r) {
  int seconds = std::max(1, static_cast<int>(std::ceil(r.duration_s)));
  std::vector<SecondPoint> points(seconds);
  std::vector<std::vector<double>> timeline(seconds), healthy(seconds);
  auto bucket = [&](int64_t us) {
    int64_t s = (us - r.t0_us) / 1'000'000;
    return static_cast<int>(std::clamp<int64_t>(s, 0, seconds - 1));
  };
  for (const auto& t : r.timeline) {
    timeline[bucket(t.start_us)].push_back(static_cast<double>(t.start_us - t.created_us) / 1000.0);
  }
  for (const auto& d : r.healthy) {
    int b = bucket(d.pushed_us);
    if (d.arrived_us) {
      healthy[b].push_back(static_cast<double>(*d.arrived_us - d.pushed_us) / 1000.0);
    } else {
      ++points[b].healthy_missing;
    }
  }
  size_t next_sample = 0;
  ServerSample last;
  for (int i = 0; i < seconds; ++i) {
    SecondPoint& p = points[i];
    p.second = i;
    while (next_sample < r.samples.size() && r.samples[next_sample].t_s < i + 1) {
      last = r.samples[next_sample++];
    }
    p.retry_set = last.retry_set;
    p.faulty_parked = last.faulty_parked;
    p.queue_latency_ms = last.queue_latency_ms;
    if (!timeline[i].empty()) {
      LatencySummary s = Summarize(std::move(timeline[i]));
      p.timeline_p99_ms = s.p99_ms;
      p.timeline_max_ms = s.max_ms;
    }
    if (!healthy[i].empty()) p.healthy_p99_ms = Summarize(std::move(healthy[i])).p99_ms;
  }
  return points;
}

std::optional<double> TimelineQueueLatencyMs(const SecondPoint& p) {
  if (!p.timeline_p99_ms && p.queue_latency_ms <= 0) return std::nullopt;
  return std::max(p.timeline_p99_ms.value_or(0), p.queue_latency_ms);
}

namespace {

// Rows of a label and `columns` cells as text: labels left-aligned, cells right-aligned.
std::string AlignedRows(const std::vector<std::pair<std::string, std::vector<std::string>>>& rows,
                        size_t columns) {
  size_t label_width = 0;
  std::vector<size_t> widths(columns, 0);
  for (const auto& [label, cells] : rows) {
    label_width = std::max(label_width, label.size());
    for (size_t i = 0; i < cells.size(); ++i) widths[i] = std::max(widths[i], cells[i].size());
  }
  std::string out;
  for (const auto& [label, cells] : rows) {
    std::string line = label + std::string(label_width - label.size(), ' ');
    for (size_t i = 0; i < cells.size(); ++i) {
      line += "   " + std::string(widths[i] - cells[i].size(), ' ') + cells[i];
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace

namespace {

using TableRows = std::vector<std::pair<std::string, std::vector<std::string>>>;

// The table's rows, one cell per run.
TableRows RunRows(const std::vector<const ScenarioResult*>& runs) {
  TableRows rows;
  auto row = [&](std::string label, auto cell) {
    std::vector<std::string> cells;
    for (const auto* r : runs) cells.push_back(cell(*r));
    rows.emplace_back(std::move(label), std::move(cells));
  };
  row("", [](const ScenarioResult& r) { return r.name; });
  row("timeline jobs run / enqueued", [](const ScenarioResult& r) {
    return std::to_string(r.timeline.size()) + " / " + std::to_string(r.timeline_enqueued);
  });
  row("timeline latency p50 / p99 / max (ms)", [](const ScenarioResult& r) {
    LatencySummary s = Summarize(TimelineLatenciesMs(r));
    return Ms(s.p50_ms) + " / " + Ms(s.p99_ms) + " / " + Ms(s.max_ms);
  });
  row("healthy deliveries arrived / pushed", [](const ScenarioResult& r) {
    return std::to_string(HealthyArrived(r)) + " / " + std::to_string(r.healthy.size());
  });
  row("healthy delivery latency p50 / p99 (ms)", [](const ScenarioResult& r) {
    LatencySummary s = Summarize(HealthyLatenciesMs(r));
    return Ms(s.p50_ms) + " / " + Ms(s.p99_ms);
  });
  row("faulty-host jobs pushed",
      [](const ScenarioResult& r) { return std::to_string(r.faulty_pushed); });
  row("faulty-host requests received",
      [](const ScenarioResult& r) { return std::to_string(r.faulty_requests); });
  row("faulty-host failed attempts (retried)", [](const ScenarioResult& r) {
    return std::to_string(LastOf(r, &ServerSample::faulty_failures));
  });
  row("faulty-host jobs parked (max / end)", [](const ScenarioResult& r) {
    return std::to_string(MaxOf(r, &ServerSample::faulty_parked)) + " / " +
           std::to_string(LastOf(r, &ServerSample::faulty_parked));
  });
  row("dead set at end",
      [](const ScenarioResult& r) { return std::to_string(LastOf(r, &ServerSample::dead_set)); });
  row("retry set size max",
      [](const ScenarioResult& r) { return std::to_string(MaxOf(r, &ServerSample::retry_set)); });
  row("delivery jobs handed to the worker",
      [](const ScenarioResult& r) { return std::to_string(r.foreign_jobs); });
  return rows;
}

}  // namespace

std::string FormatColumns(const std::vector<const ScenarioResult*>& runs) {
  return AlignedRows(RunRows(runs), runs.size());
}

std::string FormatTable(const ScenarioResult& run, const ScenarioResult* baseline) {
  std::vector<const ScenarioResult*> runs;
  if (baseline != nullptr) runs.push_back(baseline);
  runs.push_back(&run);
  TableRows rows = RunRows(runs);
  if (baseline != nullptr) {
    double b = Summarize(TimelineLatenciesMs(*baseline)).p99_ms;
    double f = Summarize(TimelineLatenciesMs(run)).p99_ms;
    rows.push_back(
        {"timeline p99 ratio fault / baseline", {"", Fmt("%.2f", f / std::max(b, 1e-3))}});
  }
  return AlignedRows(rows, runs.size());
}

std::string FormatCsv(const std::vector<SecondPoint>& points) {
  auto opt = [](const std::optional<double>& v) { return v ? Fmt("%.3f", *v) : std::string(); };
  std::string out =
      "second,retry_set,faulty_parked,queue_latency_ms,timeline_p99_ms,timeline_max_ms,"
      "healthy_p99_ms,healthy_missing\n";
  for (const auto& p : points) {
    out += std::to_string(p.second) + "," + std::to_string(p.retry_set) + "," +
           std::to_string(p.faulty_parked) + "," + Fmt("%.3f", p.queue_latency_ms) + "," +
           opt(p.timeline_p99_ms) + "," + opt(p.timeline_max_ms) + "," + opt(p.healthy_p99_ms) +
           "," + std::to_string(p.healthy_missing) + "\n";
  }
  return out;
}

std::string FormatSummaryJson(const ScenarioResult& run, const ScenarioResult* baseline,
                              const std::vector<Verdict>& verdicts) {
  auto one = [](const ScenarioResult& r) {
    LatencySummary tl = Summarize(TimelineLatenciesMs(r));
    LatencySummary hl = Summarize(HealthyLatenciesMs(r));
    return nlohmann::json{{"name", r.name},
                          {"fault", std::string(FaultName(r.fault))},
                          {"duration_s", r.duration_s},
                          {"timeline",
                           {{"enqueued", r.timeline_enqueued},
                            {"run", r.timeline.size()},
                            {"p50_ms", tl.p50_ms},
                            {"p99_ms", tl.p99_ms},
                            {"max_ms", tl.max_ms}}},
                          {"healthy",
                           {{"pushed", r.healthy.size()},
                            {"arrived", HealthyArrived(r)},
                            {"p50_ms", hl.p50_ms},
                            {"p99_ms", hl.p99_ms}}},
                          {"faulty",
                           {{"pushed", r.faulty_pushed},
                            {"requests", r.faulty_requests},
                            {"failures", LastOf(r, &ServerSample::faulty_failures)},
                            {"parked_max", MaxOf(r, &ServerSample::faulty_parked)},
                            {"parked_end", LastOf(r, &ServerSample::faulty_parked)}}},
                          {"retry_set_max", MaxOf(r, &ServerSample::retry_set)},
                          {"dead_end", LastOf(r, &ServerSample::dead_set)},
                          {"foreign_jobs", r.foreign_jobs}};
  };
  nlohmann::json doc = {{"run", one(run)}};
  if (baseline != nullptr) doc["baseline"] = one(*baseline);
  nlohmann::json v = nlohmann::json::array();
  for (const auto& verdict : verdicts)
    v.push_back({{"pass", verdict.pass}, {"text", verdict.text}});
  doc["verdicts"] = v;
  doc["pass"] = AllPass(verdicts);
  return doc.dump(2) + "\n";
}

}  // namespace bulkhead
