// CronSchedule: when a cron entry is due, in UTC. Two forms:
// - Five fields, "minute hour day-of-month month day-of-week" (Faktory documents only this form):
//   each field `*`, a number, a range `a-b`, a step `*/n` or `a-b/n`, or a comma list of those;
//   months JAN-DEC and weekdays SUN-SAT by name (any case); weekday 7 is Sunday too. As in Vixie
//   cron, when both day fields are restricted (neither starts with `*`) a day matching either is
//   due; otherwise a day must match both.
// - Descriptors (bulkhead's, not Faktory's): @yearly (@annually), @monthly, @weekly, @daily
//   (@midnight), @hourly; "@every DURATION" (Go-style "90s", "5m", "1h30m"; whole seconds, at
//   least 1 s): due at every multiple of DURATION since the Unix epoch, so that every node and
//   every restart agree on the due times.
// A value type; thread-compatible.
#pragma once

#include <bitset>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "bulkhead/util/clock.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

class CronSchedule {
 public:
  // InvalidArgument names the field and what is wrong ("hour: 24 is out of range 0-23").
  static Result<CronSchedule> Parse(std::string_view text);

  // The first due time strictly after `t`.
  TimePoint Next(TimePoint t) const;
  // The last due time at or before `t`; nullopt when there is none in the 5 years before it.
  std::optional<TimePoint> Latest(TimePoint t) const;

  const std::string& text() const { return text_; }

 private:
  // Whether `day` (days since the epoch) is a due day.
  bool DayMatches(int64_t day) const;
  // The last (or, with forward, first) due minute of the day within [from, to] minutes of it.
  std::optional<int> MinuteOfDay(int from, int to, bool forward) const;

  std::string text_;
  std::chrono::seconds every_{0};  // @every; zero for the field form
  std::bitset<60> minutes_;
  std::bitset<24> hours_;
  std::bitset<32> days_;     // 1-31
  std::bitset<13> months_;   // 1-12
  std::bitset<7> weekdays_;  // 0 = Sunday
  bool days_star_ = true;
  bool weekdays_star_ = true;
};

}  // namespace bulkhead
