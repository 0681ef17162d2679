#include "bulkhead/compartment/retry_after.h"

#include <gtest/gtest.h>

#include "bulkhead/util/time_format.h"

namespace bulkhead {
namespace {

using std::chrono::hours;
using std::chrono::seconds;

// Sun, 06 Nov 1994 08:49:37 GMT
TimePoint T(const char* rfc3339) { return *ParseRfc3339(rfc3339); }

const TimePoint kNow = T("1994-11-06T08:49:37Z");
const Duration kMax = hours(1);

TEST(RetryAfterTest, DeltaSeconds) {
  EXPECT_EQ(ParseRetryAfter("120", kNow, kMax), kNow + seconds(120));
  EXPECT_EQ(ParseRetryAfter("0", kNow, kMax), kNow);
  EXPECT_EQ(ParseRetryAfter("  7\t", kNow, kMax), kNow + seconds(7));
  EXPECT_EQ(ParseRetryAfter("007", kNow, kMax), kNow + seconds(7));
}

TEST(RetryAfterTest, DeltaSecondsClampedToBound) {
  EXPECT_EQ(ParseRetryAfter("3600", kNow, kMax), kNow + kMax);
  EXPECT_EQ(ParseRetryAfter("3601", kNow, kMax), kNow + kMax);
  EXPECT_EQ(ParseRetryAfter("99999999999999999999999999999", kNow, kMax), kNow + kMax);
}

TEST(RetryAfterTest, ImfFixdate) {
  EXPECT_EQ(ParseRetryAfter("Sun, 06 Nov 1994 08:51:37 GMT", kNow, kMax), kNow + seconds(120));
  // Weekday names are checked for spelling only.
  EXPECT_EQ(ParseRetryAfter("Mon, 06 Nov 1994 08:51:37 GMT", kNow, kMax), kNow + seconds(120));
}

TEST(RetryAfterTest, ObsoleteDateForms) {
  EXPECT_EQ(ParseRetryAfter("Sunday, 06-Nov-94 08:51:37 GMT", kNow, kMax), kNow + seconds(120));
  EXPECT_EQ(ParseRetryAfter("Sun Nov  6 08:51:37 1994", kNow, kMax), kNow + seconds(120));
  const TimePoint later = T("2026-11-16T08:49:37Z");
  EXPECT_EQ(ParseRetryAfter("Mon Nov 16 08:51:37 2026", later, kMax), later + seconds(120));
  EXPECT_EQ(ParseRetryAfter("Monday, 16-Nov-26 08:51:37 GMT", later, kMax), later + seconds(120));
}

TEST(RetryAfterTest, PastDateMeansNow) {
  EXPECT_EQ(ParseRetryAfter("Sun, 06 Nov 1994 08:00:00 GMT", kNow, kMax), kNow);
  EXPECT_EQ(ParseRetryAfter("Thu, 01 Jan 1970 00:00:00 GMT", kNow, kMax), kNow);
  EXPECT_EQ(ParseRetryAfter("Sat, 01 Jan 0000 00:00:00 GMT", kNow, kMax), kNow);
}

TEST(RetryAfterTest, FarFutureDateClamped) {
  EXPECT_EQ(ParseRetryAfter("Mon, 07 Nov 1994 08:49:37 GMT", kNow, kMax), kNow + kMax);
  EXPECT_EQ(ParseRetryAfter("Fri, 31 Dec 9999 23:59:59 GMT", kNow, kMax), kNow + kMax);
}

TEST(RetryAfterTest, SubSecondNowIsRespected) {
  const TimePoint now = kNow + std::chrono::milliseconds(400);
  EXPECT_EQ(ParseRetryAfter("Sun, 06 Nov 1994 08:49:38 GMT", now, kMax),
            now + std::chrono::milliseconds(600));
}

TEST(RetryAfterTest, NegativeBoundActsAsZero) {
  EXPECT_EQ(ParseRetryAfter("120", kNow, -seconds(5)), kNow);
}

TEST(RetryAfterTest, HugeBoundDoesNotOverflow) {
  EXPECT_EQ(ParseRetryAfter("99999999999999999999", kNow, Duration::max()), kNow + hours(24 * 366));
  EXPECT_EQ(ParseRetryAfter("Fri, 31 Dec 9999 23:59:59 GMT", kNow, Duration::max()),
            kNow + hours(24 * 366));
}

TEST(RetryAfterTest, JunkIsNotPresent) {
  for (const char* junk : {"",
                           "   ",
                           "-5",
                           "+5",
                           "1.5",
                           "12abc",
                           "abc",
                           "5 s",
                           "0x10",
                           "Sun, 06 Nov 1994 08:49:37",
                           "Sun, 06 Nov 1994 08:49:37 UTC",
                           "Sun, 6 Nov 1994 08:49:37 GMT",
                           "Sun, 06 nov 1994 08:49:37 GMT",
                           "Xyz, 06 Nov 1994 08:49:37 GMT",
                           "Sun, 30 Feb 1994 08:49:37 GMT",
                           "Sun, 06 Nov 1994 24:00:00 GMT",
                           "Sun, 06 Nov 1994 08:60:00 GMT",
                           "Sun, 06 Nov 1994 08:49:37 GMT junk",
                           "Sun, 06 Nov 94 08:49:37 GMT",
                           "Sunday, 06-Nov-1994 08:49:37 GMT",
                           "Sun Nov 6 08:49:37 1994",
                           "2026-11-29T18:00:00Z"}) {
    EXPECT_EQ(ParseRetryAfter(junk, kNow, kMax), std::nullopt) << "'" << junk << "'";
  }
}

TEST(RetryAfterTest, LeapSecondAccepted) {
  EXPECT_EQ(ParseRetryAfter("Sun, 06 Nov 1994 08:49:60 GMT", kNow, kMax), kNow + seconds(23));
}

}  // namespace
}  // namespace bulkhead
