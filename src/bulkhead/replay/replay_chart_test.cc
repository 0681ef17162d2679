#include "bulkhead/replay/replay_chart.h"

#include <gtest/gtest.h>

namespace bulkhead {
namespace {

size_t Count(const std::string& s, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = s.find(needle); pos != std::string::npos; pos = s.find(needle, pos + 1)) ++n;
  return n;
}

TEST(ReplayChartTest, NiceCeiling) {
  EXPECT_DOUBLE_EQ(NiceCeiling(0, 10), 10);
  EXPECT_DOUBLE_EQ(NiceCeiling(11, 10), 20);
  EXPECT_DOUBLE_EQ(NiceCeiling(20, 10), 20);
  EXPECT_DOUBLE_EQ(NiceCeiling(21, 10), 50);
  EXPECT_DOUBLE_EQ(NiceCeiling(3001, 10), 5000);
  EXPECT_DOUBLE_EQ(NiceCeiling(0.3, 0), 0.5);
}

TEST(ReplayChartTest, DrawsOneBarPerSecondWithTimelineJobsAndEveryLine) {
  std::vector<SecondPoint> points(3);
  for (int i = 0; i < 3; ++i) {
    points[i].second = i;
    points[i].retry_set = i * 10;
    points[i].faulty_parked = i;
  }
  points[0].timeline_p99_ms = 2;
  points[2].timeline_p99_ms = 400;  // above the axis: clipped to its top
  points[1].healthy_p99_ms = 4;
  ReplayChartOptions o;
  o.title = "replay: 5xx & friends <test>";
  std::string svg = RenderReplayChart(points, o);
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_EQ(Count(svg, ": timeline queue latency "), 2u);  // one bar per second with jobs
  EXPECT_EQ(Count(svg, "<polyline"), 3u);                  // healthy, parked, retry set
  EXPECT_NE(svg.find("5xx &amp; friends &lt;test&gt;"), std::string::npos);
  EXPECT_EQ(svg.find("<test>"), std::string::npos);
  EXPECT_NE(svg.find("timeline p99 bound 50 ms"), std::string::npos);
}

TEST(ReplayChartTest, AStalledQueueDrawsItsSampledAgeWhenNoJobStarted) {
  std::vector<SecondPoint> points(2);
  points[1].second = 1;
  points[1].queue_latency_ms = 12'000;
  std::string svg = RenderReplayChart(points, {});
  EXPECT_EQ(Count(svg, ": timeline queue latency 12000.0 ms"), 1u);
  EXPECT_NE(svg.find(">20000<"), std::string::npos);  // the right axis grew to hold it
}

TEST(ReplayChartTest, EmptySeriesStillRenders) {
  std::string svg = RenderReplayChart({}, {});
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_EQ(Count(svg, "<polyline"), 0u);
}

}  // namespace
}  // namespace bulkhead
