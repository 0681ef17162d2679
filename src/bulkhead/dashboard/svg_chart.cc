#include "bulkhead/dashboard/svg_chart.h"

#include <algorithm>
#include <cstdio>

#include "bulkhead/dashboard/html.h"

namespace bulkhead::dashboard {
namespace {

constexpr double kWidth = 600;
constexpr double kHeight = 110;

std::string Number(double v) {
  char buf[32];
  if (v >= 100 || v == 0) {
    std::snprintf(buf, sizeof(buf), "%.0f", v);
  } else {
    std::snprintf(buf, sizeof(buf), "%.2g", v);
  }
  return buf;
}

}  // namespace

std::string RenderSvgChart(std::string_view title, const std::vector<ChartSeries>& series,
                           std::string_view unit) {
  TimePoint first = TimePoint::max(), last = TimePoint::min();
  double top = 0;
  bool any = false;
  for (const auto& s : series) {
    if (s.points.size() < 2) continue;
    any = true;
    first = std::min(first, s.points.front().at);
    last = std::max(last, s.points.back().at);
    for (const auto& p : s.points) top = std::max(top, p.value);
  }
  std::string h = "<figure class=\"chart\"><figcaption><strong>" + Escape(title) + "</strong>";
  for (size_t i = 0; i < series.size() && i < 2; ++i) {
    double latest = series[i].points.empty() ? 0 : series[i].points.back().value;
    h += " <span class=\"legend-" + std::to_string(i) + "\">" + Escape(series[i].name) + " " +
         Number(latest) + Escape(unit) + "</span>";
  }
  h += "</figcaption>";
  if (!any) return h + "<p class=\"muted\">no data yet</p></figure>";
  if (top <= 0) top = 1;
  double span = std::chrono::duration<double>(last - first).count();
  if (span <= 0) span = 1;
  h += "<svg viewBox=\"0 0 600 110\" preserveAspectRatio=\"none\" role=\"img\" aria-label=\"" +
       Escape(title) + "\"><polyline class=\"axis\" points=\"0,109 600,109\"/>";
  for (size_t i = 0; i < series.size() && i < 2; ++i) {
    if (series[i].points.size() < 2) continue;
    h += "<polyline class=\"s" + std::to_string(i) + "\" points=\"";
    for (const auto& p : series[i].points) {
      double x = std::chrono::duration<double>(p.at - first).count() / span * kWidth;
      double y = kHeight - 2 - p.value / top * (kHeight - 6);
      char buf[48];
      std::snprintf(buf, sizeof(buf), "%.1f,%.1f ", x, y);
      h += buf;
    }
    h += "\"/>";
  }
  h += "</svg><span class=\"muted\">max " + Number(top) + Escape(unit) + "</span></figure>";
  return h;
}

}  // namespace bulkhead::dashboard
