#include "bulkhead/replay/replay_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace bulkhead {
namespace {

constexpr double kLeft = 72, kRight = 72, kTop = 64, kBottom = 88;
constexpr char kRetryColor[] = "#1f5fbf";
constexpr char kParkedColor[] = "#7f7f7f";
constexpr char kTimelineColor[] = "#f28e2b";
constexpr char kHealthyColor[] = "#2ca02c";
constexpr char kBoundColor[] = "#d62728";

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string Label(double v) {
  char buf[32];
  if (v == std::floor(v)) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%g", v);
  }
  return buf;
}

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string Text(double x, double y, const std::string& s, const std::string& attrs = "") {
  return "<text x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" " + attrs + ">" + Escape(s) + "</text>\n";
}

std::string Line(double x1, double y1, double x2, double y2, const std::string& attrs) {
  return "<line x1=\"" + Num(x1) + "\" y1=\"" + Num(y1) + "\" x2=\"" + Num(x2) + "\" y2=\"" +
         Num(y2) + "\" " + attrs + "/>\n";
}

}  // namespace

double NiceCeiling(double v, double minimum) {
  v = std::max(v, minimum);
  if (v <= 0) return 1;
  double p = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * p >= v * (1 - 1e-9)) return m * p;
  }
  return 10 * p;
}

std::string RenderReplayChart(const std::vector<SecondPoint>& points, const ReplayChartOptions& o) {
  const double w = o.width, h = o.height;
  const double pw = w - kLeft - kRight, ph = h - kTop - kBottom;
  const size_t n = std::max<size_t>(points.size(), 1);

  double left_max = 0, right_max = 0;
  for (const auto& p : points) {
    left_max = std::max(
        {left_max, static_cast<double>(p.retry_set), static_cast<double>(p.faulty_parked)});
    right_max =
        std::max({right_max, TimelineQueueLatencyMs(p).value_or(0), p.healthy_p99_ms.value_or(0)});
  }
  left_max = NiceCeiling(left_max, 10);
  right_max = NiceCeiling(right_max, o.latency_bound_ms * 1.2);

  auto x_of = [&](double second) { return kLeft + pw * second / static_cast<double>(n); };
  auto yl = [&](double v) { return kTop + ph - ph * v / left_max; };
  auto yr = [&](double v) { return kTop + ph - ph * std::min(v, right_max) / right_max; };

  std::string svg = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Num(w) + "\" height=\"" + Num(h) +
         "\" viewBox=\"0 0 " + Num(w) + " " + Num(h) +
         "\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg += Text(kLeft, 24, o.title, "font-size=\"16\" font-weight=\"bold\"");
  svg += Text(kLeft, 44, o.subtitle, "fill=\"#555\" font-size=\"11\"");

  // Grid and axes: 5 divisions on both value axes.
  for (int i = 0; i <= 5; ++i) {
    double y = kTop + ph - ph * i / 5.0;
    svg += Line(kLeft, y, kLeft + pw, y, "stroke=\"#e5e5e5\"");
    svg += Text(kLeft - 8, y + 4, Label(left_max * i / 5.0),
                "text-anchor=\"end\" fill=\"" + std::string(kRetryColor) + "\"");
    svg += Text(kLeft + pw + 8, y + 4, Label(right_max * i / 5.0),
                "fill=\"" + std::string(kTimelineColor) + "\"");
  }
  size_t step = n <= 20 ? 1 : n <= 60 ? 5 : n <= 180 ? 15 : 60;
  for (size_t s = 0; s <= n; s += step) {
    svg += Line(x_of(s), kTop + ph, x_of(s), kTop + ph + 4, "stroke=\"#333\"");
    svg += Text(x_of(s), kTop + ph + 18, std::to_string(s), "text-anchor=\"middle\"");
  }
  svg += Line(kLeft, kTop, kLeft, kTop + ph, "stroke=\"#333\"");
  svg += Line(kLeft + pw, kTop, kLeft + pw, kTop + ph, "stroke=\"#333\"");
  svg += Line(kLeft, kTop + ph, kLeft + pw, kTop + ph, "stroke=\"#333\"");
  svg += Text(kLeft + pw / 2, kTop + ph + 36, "seconds since the load started",
              "text-anchor=\"middle\"");
  svg += "<text transform=\"translate(18," + Num(kTop + ph / 2) +
         ") rotate(-90)\" text-anchor=\"middle\" fill=\"" + kRetryColor +
         "\">jobs (retry set, parked)</text>\n";
  svg += "<text transform=\"translate(" + Num(w - 16) + "," + Num(kTop + ph / 2) +
         ") rotate(90)\" text-anchor=\"middle\" fill=\"" + kTimelineColor +
         "\">latency (ms)</text>\n";

  // Bars: timeline queue latency per second (right axis).
  double bar_w = std::max(1.0, pw / static_cast<double>(n) * 0.7);
  for (const auto& p : points) {
    std::optional<double> latency = TimelineQueueLatencyMs(p);
    if (!latency) continue;
    double x = x_of(p.second + 0.5) - bar_w / 2;
    double y = yr(*latency);
    svg += "<rect x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" width=\"" + Num(bar_w) +
           "\" height=\"" + Num(std::max(0.5, kTop + ph - y)) + "\" fill=\"" + kTimelineColor +
           "\" fill-opacity=\"0.85\"><title>second " + std::to_string(p.second) +
           ": timeline queue latency " + Num(*latency) + " ms</title></rect>\n";
  }
  // The latency bound.
  if (o.latency_bound_ms > 0 && o.latency_bound_ms <= right_max) {
    double y = yr(o.latency_bound_ms);
    svg += Line(kLeft, y, kLeft + pw, y,
                "stroke=\"" + std::string(kBoundColor) + "\" stroke-dasharray=\"6 4\"");
    svg += Text(kLeft + pw - 4, y - 5, "timeline p99 bound " + Label(o.latency_bound_ms) + " ms",
                "text-anchor=\"end\" fill=\"" + std::string(kBoundColor) + "\"");
  }
  // Lines: healthy delivery p99 (right), parked and retry set (left).
  auto polyline = [&](auto value_of, auto y_of, const char* color, const std::string& extra) {
    std::string pts;
    for (const auto& p : points) {
      auto v = value_of(p);
      if (!v) continue;
      pts += Num(x_of(p.second + 0.5)) + "," + Num(y_of(*v)) + " ";
    }
    if (pts.empty()) return std::string();
    return "<polyline fill=\"none\" stroke=\"" + std::string(color) + "\" " + extra + " points=\"" +
           pts + "\"/>\n";
  };
  svg += polyline([](const SecondPoint& p) { return p.healthy_p99_ms; }, yr, kHealthyColor,
                  "stroke-width=\"2\"");
  svg += polyline(
      [](const SecondPoint& p) {
        return std::optional<double>(static_cast<double>(p.faulty_parked));
      },
      yl, kParkedColor, "stroke-width=\"2\" stroke-dasharray=\"3 3\"");
  svg += polyline(
      [](const SecondPoint& p) { return std::optional<double>(static_cast<double>(p.retry_set)); },
      yl, kRetryColor, "stroke-width=\"2.5\"");

  // Legend under the axis title.
  struct Entry {
    const char* color;
    const char* text;
    bool bar;
  };
  const Entry legend[] = {{kRetryColor, "retry set size (left)", false},
                          {kParkedColor, "faulty-host jobs parked (left)", false},
                          {kTimelineColor, "timeline queue latency (right)", true},
                          {kHealthyColor, "healthy-host delivery latency p99 (right)", false}};
  // Two rows: the left axis's series, then the right axis's.
  for (size_t i = 0; i < std::size(legend); ++i) {
    const Entry& e = legend[i];
    double lx = kLeft + static_cast<double>(i % 2) * pw / 2, ly = h - (i < 2 ? 30 : 12);
    if (e.bar) {
      svg += "<rect x=\"" + Num(lx) + "\" y=\"" + Num(ly - 9) +
             "\" width=\"14\" height=\"10\" fill=\"" + e.color + "\"/>\n";
    } else {
      svg += Line(lx, ly - 4, lx + 14, ly - 4,
                  "stroke=\"" + std::string(e.color) + "\" stroke-width=\"2.5\"");
    }
    svg += Text(lx + 19, ly, e.text);
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace bulkhead
