#include "bulkhead/replay/replay_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "bulkhead/util/html_escape.h"

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

std::string Text(double x, double y, const std::string& s, const std::string& attrs = "") {
  return "<text x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" " + attrs + ">" + HtmlEscape(s) +
         "</text>\n";
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

namespace {

// The plot area and its scales: seconds on x, jobs on the left axis, milliseconds on the right.
struct ChartFrame {
  double w, h;    // the whole image
  double pw, ph;  // the plot area inside the margins
  size_t n;       // seconds on the x axis (at least 1)
  double left_max, right_max;

  double X(double second) const { return kLeft + pw * second / static_cast<double>(n); }
  double YLeft(double v) const { return kTop + ph - ph * v / left_max; }
  double YRight(double v) const { return kTop + ph - ph * std::min(v, right_max) / right_max; }
};

ChartFrame MakeFrame(const std::vector<SecondPoint>& points, const ReplayChartOptions& o) {
  ChartFrame f;
  f.w = o.width;
  f.h = o.height;
  f.pw = f.w - kLeft - kRight;
  f.ph = f.h - kTop - kBottom;
  f.n = std::max<size_t>(points.size(), 1);
  double left_max = 0, right_max = 0;
  for (const auto& p : points) {
    left_max = std::max(
        {left_max, static_cast<double>(p.retry_set), static_cast<double>(p.faulty_parked)});
    right_max =
        std::max({right_max, TimelineQueueLatencyMs(p).value_or(0), p.healthy_p99_ms.value_or(0)});
  }
  f.left_max = NiceCeiling(left_max, 10);
  f.right_max = NiceCeiling(right_max, o.latency_bound_ms * 1.2);
  return f;
}

// The SVG prologue, background, title and subtitle.
std::string Header(const ChartFrame& f, const ReplayChartOptions& o) {
  std::string svg = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Num(f.w) + "\" height=\"" +
         Num(f.h) + "\" viewBox=\"0 0 " + Num(f.w) + " " + Num(f.h) +
         "\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg += Text(kLeft, 24, o.title, "font-size=\"16\" font-weight=\"bold\"");
  svg += Text(kLeft, 44, o.subtitle, "fill=\"#555\" font-size=\"11\"");
  return svg;
}

// Grid and axes: 5 divisions on both value axes, second ticks, axis titles.
std::string Axes(const ChartFrame& f) {
  const double pw = f.pw, ph = f.ph;
  std::string svg;
  for (int i = 0; i <= 5; ++i) {
    double y = kTop + ph - ph * i / 5.0;
    svg += Line(kLeft, y, kLeft + pw, y, "stroke=\"#e5e5e5\"");
    svg += Text(kLeft - 8, y + 4, Label(f.left_max * i / 5.0),
                "text-anchor=\"end\" fill=\"" + std::string(kRetryColor) + "\"");
    svg += Text(kLeft + pw + 8, y + 4, Label(f.right_max * i / 5.0),
                "fill=\"" + std::string(kTimelineColor) + "\"");
  }
  const size_t n = f.n;
  size_t step = n <= 20 ? 1 : n <= 60 ? 5 : n <= 180 ? 15 : 60;
  for (size_t s = 0; s <= n; s += step) {
    svg += Line(f.X(s), kTop + ph, f.X(s), kTop + ph + 4, "stroke=\"#333\"");
    svg += Text(f.X(s), kTop + ph + 18, std::to_string(s), "text-anchor=\"middle\"");
  }
  svg += Line(kLeft, kTop, kLeft, kTop + ph, "stroke=\"#333\"");
  svg += Line(kLeft + pw, kTop, kLeft + pw, kTop + ph, "stroke=\"#333\"");
  svg += Line(kLeft, kTop + ph, kLeft + pw, kTop + ph, "stroke=\"#333\"");
  svg += Text(kLeft + pw / 2, kTop + ph + 36, "seconds since the load started",
              "text-anchor=\"middle\"");
  svg += "<text transform=\"translate(18," + Num(kTop + ph / 2) +
         ") rotate(-90)\" text-anchor=\"middle\" fill=\"" + kRetryColor +
         "\">jobs (retry set, parked)</text>\n";
  svg += "<text transform=\"translate(" + Num(f.w - 16) + "," + Num(kTop + ph / 2) +
         ") rotate(90)\" text-anchor=\"middle\" fill=\"" + kTimelineColor +
         "\">latency (ms)</text>\n";
  return svg;
}

// Bars: timeline queue latency per second (right axis).
std::string LatencyBars(const std::vector<SecondPoint>& points, const ChartFrame& f) {
  std::string svg;
  double bar_w = std::max(1.0, f.pw / static_cast<double>(f.n) * 0.7);
  for (const auto& p : points) {
    std::optional<double> latency = TimelineQueueLatencyMs(p);
    if (!latency) continue;
    double x = f.X(p.second + 0.5) - bar_w / 2;
    double y = f.YRight(*latency);
    svg += "<rect x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" width=\"" + Num(bar_w) +
           "\" height=\"" + Num(std::max(0.5, kTop + f.ph - y)) + "\" fill=\"" + kTimelineColor +
           "\" fill-opacity=\"0.85\"><title>second " + std::to_string(p.second) +
           ": timeline queue latency " + Num(*latency) + " ms</title></rect>\n";
  }
  return svg;
}

// The latency bound, when it is within the right axis.
std::string BoundLine(const ChartFrame& f, const ReplayChartOptions& o) {
  if (!(o.latency_bound_ms > 0 && o.latency_bound_ms <= f.right_max)) return "";
  double y = f.YRight(o.latency_bound_ms);
  return Line(kLeft, y, kLeft + f.pw, y,
              "stroke=\"" + std::string(kBoundColor) + "\" stroke-dasharray=\"6 4\"") +
         Text(kLeft + f.pw - 4, y - 5, "timeline p99 bound " + Label(o.latency_bound_ms) + " ms",
              "text-anchor=\"end\" fill=\"" + std::string(kBoundColor) + "\"");
}

// Lines: healthy delivery p99 (right), parked and retry set (left).
std::string SeriesLines(const std::vector<SecondPoint>& points, const ChartFrame& f) {
  auto polyline = [&](auto value_of, auto y_of, const char* color, const std::string& extra) {
    std::string pts;
    for (const auto& p : points) {
      auto v = value_of(p);
      if (!v) continue;
      pts += Num(f.X(p.second + 0.5)) + "," + Num(y_of(*v)) + " ";
    }
    if (pts.empty()) return std::string();
    return "<polyline fill=\"none\" stroke=\"" + std::string(color) + "\" " + extra + " points=\"" +
           pts + "\"/>\n";
  };
  auto yl = [&](double v) { return f.YLeft(v); };
  auto yr = [&](double v) { return f.YRight(v); };
  std::string svg;
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
  return svg;
}

// Legend under the axis title, in two rows: the left axis's series, then the right axis's.
std::string Legend(const ChartFrame& f) {
  struct Entry {
    const char* color;
    const char* text;
    bool bar;
  };
  const Entry legend[] = {{kRetryColor, "retry set size (left)", false},
                          {kParkedColor, "faulty-host jobs parked (left)", false},
                          {kTimelineColor, "timeline queue latency (right)", true},
                          {kHealthyColor, "healthy-host delivery latency p99 (right)", false}};
  std::string svg;
  for (size_t i = 0; i < std::size(legend); ++i) {
    const Entry& e = legend[i];
    double lx = kLeft + static_cast<double>(i % 2) * f.pw / 2, ly = f.h - (i < 2 ? 30 : 12);
    if (e.bar) {
      svg += "<rect x=\"" + Num(lx) + "\" y=\"" + Num(ly - 9) +
             "\" width=\"14\" height=\"10\" fill=\"" + e.color + "\"/>\n";
    } else {
      svg += Line(lx, ly - 4, lx + 14, ly - 4,
                  "stroke=\"" + std::string(e.color) + "\" stroke-width=\"2.5\"");
    }
    svg += Text(lx + 19, ly, e.text);
  }
  return svg;
}

}  // namespace

std::string RenderReplayChart(const std::vector<SecondPoint>& points, const ReplayChartOptions& o) {
  const ChartFrame f = MakeFrame(points, o);
  return Header(f, o) + Axes(f) + LatencyBars(points, f) + BoundLine(f, o) +
         SeriesLines(points, f) + Legend(f) + "</svg>\n";
}

}  // namespace bulkhead
