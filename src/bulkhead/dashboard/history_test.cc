#include "bulkhead/dashboard/history.h"

#include <gtest/gtest.h>

#include "bulkhead/dashboard/svg_chart.h"

namespace bulkhead::dashboard {
namespace {

using namespace std::chrono_literals;

TEST(HistoryTest, KeepsFiveMinutesOfSecondsAndFourHoursOfMinutes) {
  History h;
  TimePoint t0 = FromUnixMicros(1'700'000'000'000'000);
  for (int i = 0; i <= 5 * 3600; ++i) {
    h.Add({.at = t0 + std::chrono::seconds(i), .processed = i * 2});
  }
  EXPECT_EQ(h.seconds().size(), History::kSeconds);
  EXPECT_EQ(h.seconds().back().at, t0 + 5h);
  EXPECT_EQ(h.minutes().size(), History::kMinutes);
  EXPECT_EQ(h.minutes().back().at - h.minutes().front().at, 4h);
  auto rate = History::ProcessedRate(h.seconds());
  ASSERT_EQ(rate.size(), History::kSeconds - 1);
  EXPECT_DOUBLE_EQ(rate.back().value, 2.0);
}

TEST(HistoryTest, CounterGoingDownIsZeroRate) {
  std::deque<HistorySample> s = {{.at = FromUnixMicros(0), .failures = 10},
                                 {.at = FromUnixMicros(1'000'000), .failures = 0}};
  EXPECT_EQ(History::FailureRate(s).front().value, 0);
}

TEST(SvgChartTest, PolylinesWithClassesAndEscapedTitle) {
  TimePoint t0 = FromUnixMicros(0);
  std::string svg = RenderSvgChart(
      "<b>jobs</b>", {{"processed", {{t0, 0}, {t0 + 1s, 4}}}, {"failed", {{t0, 1}, {t0 + 1s, 2}}}},
      "/s");
  EXPECT_NE(svg.find("&lt;b&gt;jobs&lt;/b&gt;"), std::string::npos);
  EXPECT_NE(svg.find("<polyline class=\"s0\" points=\"0.0,108.0 600.0,4.0 \"/>"), std::string::npos)
      << svg;
  EXPECT_NE(svg.find("class=\"s1\""), std::string::npos);
  EXPECT_EQ(svg.find("style="), std::string::npos);
  EXPECT_NE(RenderSvgChart("x", {{"a", {}}}, "").find("no data yet"), std::string::npos);
}

}  // namespace
}  // namespace bulkhead::dashboard
