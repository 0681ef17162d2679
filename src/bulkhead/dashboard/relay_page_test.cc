#include "bulkhead/dashboard/relay_page.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace bulkhead::dashboard {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const TimePoint kRelayNow = FromUnixMicros(1'800'000'000'000'000);

PageContext RelayCtx() {
  return {.base = "", .csrf_token = "tok", .has_password = false, .now = kRelayNow};
}

TEST(RelayPageTest, NoRelay) {
  EXPECT_THAT(RenderRelayPage(RelayCtx(), std::nullopt), HasSubstr("id=\"no-relay\""));
}

TEST(RelayPageTest, AppsTheirFiguresAndWhyOneStopped) {
  RelaySnapshot s;
  s.listen = "0.0.0.0:42069";
  RelayAppFigures toot;
  toot.app = "toot";
  toot.service = "apns";
  toot.target = "cx.c3.toot";
  toot.accepted = 12;
  toot.forwarded = 10;
  toot.refused = {{413, 2}, {429, 1}};
  toot.reasons = {{"Unregistered", 3}};
  toot.latency_count = 2;
  toot.latency_sum_seconds = 0.1;
  RelayAppFigures droid;
  droid.app = "<script>";
  droid.service = "fcm";
  droid.target = "p";
  droid.stopped_reason = "InvalidProviderToken";
  droid.stopped_until = kRelayNow + std::chrono::minutes(10);
  s.apps = {toot, droid};
  std::string html = RenderRelayPage(RelayCtx(), s);
  EXPECT_THAT(html, HasSubstr("<tr data-app=\"toot\"><td>toot</td><td>APNs</td>"));
  EXPECT_THAT(html, HasSubstr("2×413, 1×429"));
  EXPECT_THAT(html, HasSubstr("50 ms"));
  EXPECT_THAT(html, HasSubstr("stopped: InvalidProviderToken"));
  EXPECT_THAT(html, HasSubstr("<code>Unregistered</code>"));
  EXPECT_THAT(html, Not(HasSubstr("<script>")));
  EXPECT_THAT(html, HasSubstr("aria-current=\"page\">Relay</a>"));
}

}  // namespace
}  // namespace bulkhead::dashboard
