// SvgChart: a line chart as inline SVG, rendered on the server (no chart library, no script): up
// to two series over a shared time axis, scaled to their largest value. Colours come from CSS
// classes (s0, s1), never from style attributes, so the page's CSP needs no 'unsafe-inline'.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "bulkhead/dashboard/history.h"

namespace bulkhead::dashboard {

struct ChartSeries {
  std::string name;  // shown in the legend (escaped)
  std::vector<ChartPoint> points;
};

// <figure class="chart"> with `title`, the legend (each series' latest value, `unit` after it),
// and the SVG; "no data yet" when no series has two points.
std::string RenderSvgChart(std::string_view title, const std::vector<ChartSeries>& series,
                           std::string_view unit);

}  // namespace bulkhead::dashboard
