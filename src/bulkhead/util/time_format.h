// RFC 3339 timestamps as Faktory writes them (Go's RFC3339Nano: UTC, "Z", fraction without
// trailing zeros), and a parser that accepts any RFC 3339 timestamp clients send.
#pragma once

#include <string>
#include <string_view>

#include "bulkhead/util/clock.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

// "2026-11-29T18:49:56.123456Z" (microsecond precision, trailing zeros trimmed, "Z").
std::string FormatRfc3339(TimePoint t);
// The same, appended to `out` (no string of its own: for the steps that run for every job).
void AppendRfc3339(std::string& out, TimePoint t);

// Parses "YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)"; 't' and 'z' are accepted too.
// Fractions beyond microseconds are truncated. Years outside kMinRfc3339Year..kMaxRfc3339Year
// (what a nanosecond TimePoint holds, with room for adding deadlines) are refused.
// InvalidArgument names what is wrong.
inline constexpr int kMinRfc3339Year = 1678;
inline constexpr int kMaxRfc3339Year = 2261;
Result<TimePoint> ParseRfc3339(std::string_view s);

// "YYYY-MM-DD" of t in UTC; used for daily counters.
std::string FormatDate(TimePoint t);

}  // namespace bulkhead
