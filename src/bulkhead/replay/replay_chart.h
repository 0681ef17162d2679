// The replay's chart, drawn like the incident's: retry-set size over time (line, left axis) and
// timeline queue latency (bars, right axis), plus the healthy host's delivery latency and the
// faulty host's parked jobs, with the 50 ms bound drawn across. Plain SVG 1.1, no scripts or
// external resources, so it renders in a browser, on GitHub and in docs.
#pragma once

#include <string>
#include <vector>

#include "bulkhead/replay/replay_report.h"

namespace bulkhead {

struct ReplayChartOptions {
  std::string title;     // e.g. "bulkhead replay: blackhole, 60 s"
  std::string subtitle;  // e.g. the load: "50 timeline/s, 20 webpush/s, 30% to the faulty host"
  double latency_bound_ms = 50;
  int width = 960;
  int height = 480;
};

// An SVG document of `points` (one per second).
std::string RenderReplayChart(const std::vector<SecondPoint>& points,
                              const ReplayChartOptions& options);

// The smallest 1, 2 or 5 × 10^k that is >= v (and >= minimum).
double NiceCeiling(double v, double minimum);

}  // namespace bulkhead
