#include "bulkhead/server/testing_clock_api.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace bulkhead {
namespace {

using namespace std::chrono_literals;

std::string ErrorOf(const HttpResponseOut& r) {
  return nlohmann::json::parse(r.body).value("error", "");
}

TEST(TestingClockApiTest, RefusedOnAServerOnTheSystemClock) {
  HttpResponseOut r = AdvanceTestingClock(nullptr, R"({"advance_seconds": 60})");
  EXPECT_EQ(r.status, 404);
  EXPECT_NE(ErrorOf(r).find("--testing-clock"), std::string::npos) << r.body;
}

TEST(TestingClockApiTest, MovesTheClockAndSaysWhereItIs) {
  ManualClock base(FromUnixMicros(1'700'000'000'000'000));
  OffsetClock clock(base);
  HttpResponseOut r = AdvanceTestingClock(&clock, R"({"advance_seconds": 86400})");
  ASSERT_EQ(r.status, 200) << r.body;
  auto doc = nlohmann::json::parse(r.body);
  EXPECT_EQ(doc["offset_seconds"], 86400);
  EXPECT_EQ(doc["now"], "2023-11-15T22:13:20Z");
  EXPECT_EQ(clock.Now(), base.Now() + 24h);
}

TEST(TestingClockApiTest, BadBodiesAreNamedAndChangeNothing) {
  ManualClock base;
  OffsetClock clock(base);
  for (const char* body : {"", "[1]", R"({"advance_seconds": -5})", R"({"advance_seconds": 1.5})",
                           R"({"advance": 5})", R"({"advance_seconds": "5"})"}) {
    HttpResponseOut r = AdvanceTestingClock(&clock, body);
    EXPECT_EQ(r.status, 400) << body;
    EXPECT_FALSE(ErrorOf(r).empty()) << body;
  }
  HttpResponseOut far = AdvanceTestingClock(&clock, R"({"advance_seconds": 400000000})");
  EXPECT_EQ(far.status, 400);
  EXPECT_NE(ErrorOf(far).find("10 years"), std::string::npos) << far.body;
  HttpResponseOut huge = AdvanceTestingClock(&clock, R"({"advance_seconds": 9000000000000000000})");
  EXPECT_EQ(huge.status, 400);
  EXPECT_NE(ErrorOf(huge).find("10 years"), std::string::npos) << huge.body;
  EXPECT_EQ(clock.offset(), Duration::zero());
}

}  // namespace
}  // namespace bulkhead
