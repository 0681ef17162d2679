#include "bulkhead/util/cron_schedule.h"

#include <gtest/gtest.h>

#include "bulkhead/util/time_format.h"

namespace bulkhead {
namespace {

TimePoint At(const char* rfc3339) { return *ParseRfc3339(rfc3339); }

struct NextCase {
  const char* schedule;
  const char* after;
  const char* next;    // the first due time strictly after `after`
  const char* latest;  // the last due time at or before `after`
};

TEST(CronScheduleTest, NextAndLatest) {
  const NextCase cases[] = {
      {"* * * * *", "2026-12-01T10:00:00Z", "2026-12-01T10:01:00Z", "2026-12-01T10:00:00Z"},
      {"* * * * *", "2026-12-01T10:00:59.9Z", "2026-12-01T10:01:00Z", "2026-12-01T10:00:00Z"},
      {"*/5 * * * *", "2026-12-01T10:07:00Z", "2026-12-01T10:10:00Z", "2026-12-01T10:05:00Z"},
      {"12 * * * *", "2026-12-01T10:12:00Z", "2026-12-01T11:12:00Z", "2026-12-01T10:12:00Z"},
      {"0 13 * * *", "2026-12-01T14:00:00Z", "2026-12-02T13:00:00Z", "2026-12-01T13:00:00Z"},
      {"0 0 * * *", "2026-12-31T23:59:00Z", "2027-01-01T00:00:00Z", "2026-12-31T00:00:00Z"},
      {"30 9-17/4 * * *", "2026-12-01T09:31:00Z", "2026-12-01T13:30:00Z", "2026-12-01T09:30:00Z"},
      {"0,30 8 * * *", "2026-12-01T08:15:00Z", "2026-12-01T08:30:00Z", "2026-12-01T08:00:00Z"},
      // 2026-12-01 is a Tuesday.
      {"0 9 * * MON-FRI", "2026-12-04T10:00:00Z", "2026-12-07T09:00:00Z", "2026-12-04T09:00:00Z"},
      {"0 9 * * sun", "2026-12-01T00:00:00Z", "2026-12-06T09:00:00Z", "2026-11-29T09:00:00Z"},
      {"0 9 * * 7", "2026-12-01T00:00:00Z", "2026-12-06T09:00:00Z", "2026-11-29T09:00:00Z"},
      {"0 0 1 JAN,jul *", "2026-12-01T00:00:00Z", "2027-01-01T00:00:00Z", "2026-07-01T00:00:00Z"},
      // Both day fields restricted: either matches (the 13th, or a Friday).
      {"0 0 13 * FRI", "2026-12-05T00:00:00Z", "2026-12-11T00:00:00Z", "2026-12-04T00:00:00Z"},
      // Day-of-month restricted, day-of-week `*`: both must match (only the 31st).
      {"0 0 31 * *", "2026-12-01T00:00:00Z", "2026-12-31T00:00:00Z", "2026-10-31T00:00:00Z"},
      {"0 0 29 2 *", "2026-12-01T00:00:00Z", "2028-02-29T00:00:00Z", "2024-02-29T00:00:00Z"},
      {"@hourly", "2026-12-01T10:30:00Z", "2026-12-01T11:00:00Z", "2026-12-01T10:00:00Z"},
      {"@daily", "2026-12-01T10:30:00Z", "2026-12-02T00:00:00Z", "2026-12-01T00:00:00Z"},
      {"@midnight", "2026-12-01T00:00:00Z", "2026-12-02T00:00:00Z", "2026-12-01T00:00:00Z"},
      {"@weekly", "2026-12-01T10:30:00Z", "2026-12-06T00:00:00Z", "2026-11-29T00:00:00Z"},
      {"@monthly", "2026-12-01T10:30:00Z", "2027-01-01T00:00:00Z", "2026-12-01T00:00:00Z"},
      {"@yearly", "2026-12-01T10:30:00Z", "2027-01-01T00:00:00Z", "2026-01-01T00:00:00Z"},
      {"@every 30s", "2026-12-01T10:00:10Z", "2026-12-01T10:00:30Z", "2026-12-01T10:00:00Z"},
      {"@every 1h30m", "2026-12-01T10:00:00Z", "2026-12-01T10:30:00Z", "2026-12-01T09:00:00Z"},
      {"@every 5m", "2026-12-01T10:05:00Z", "2026-12-01T10:10:00Z", "2026-12-01T10:05:00Z"},
  };
  for (const NextCase& c : cases) {
    auto s = CronSchedule::Parse(c.schedule);
    ASSERT_TRUE(s.ok()) << c.schedule << ": " << s.status().message();
    EXPECT_EQ(FormatRfc3339(s->Next(At(c.after))), FormatRfc3339(At(c.next)))
        << c.schedule << " after " << c.after;
    auto latest = s->Latest(At(c.after));
    ASSERT_TRUE(latest) << c.schedule;
    EXPECT_EQ(FormatRfc3339(*latest), FormatRfc3339(At(c.latest)))
        << c.schedule << " at " << c.after;
  }
}

TEST(CronScheduleTest, ErrorsNameTheField) {
  const std::pair<const char*, const char*> cases[] = {
      {"* * * *", "\"* * * *\" needs 5 fields (minute hour day-of-month month day-of-week), has 4"},
      {"60 * * * *", "minute: 60 is out of range 0-59"},
      {"* 24 * * *", "hour: 24 is out of range 0-23"},
      {"* * 0 * *", "day-of-month: 0 is out of range 1-31"},
      {"* * * 13 *", "month: 13 is out of range 1-12"},
      {"* * * FOO *", "month: \"FOO\" is not a number"},
      {"* * * * 8", "day-of-week: 8 is out of range 0-7"},
      {"5-1 * * * *", "minute: range \"5-1\" runs backwards"},
      {"*/0 * * * *", "minute: bad step in \"*/0\""},
      {"x * * * *", "minute: \"x\" is not a number"},
      {"@often",
       "unknown descriptor \"@often\" (@yearly, @monthly, @weekly, @daily, @hourly or "
       "@every DURATION)"},
      {"@every 10", "@every: \"10\" is not a duration such as 30s, 5m or 1h30m"},
      {"@every 5x", "@every: \"5x\" is not a duration such as 30s, 5m or 1h30m"},
      {"@every 0s", "@every: the interval must be at least 1s"},
  };
  for (auto [text, error] : cases) {
    auto s = CronSchedule::Parse(text);
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_EQ(s.status().message(), error) << text;
  }
}

}  // namespace
}  // namespace bulkhead
