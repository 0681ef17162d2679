// Retry-After (RFC 9110 §10.2.3): the time before which a host asked not to be contacted again.
#pragma once

#include <optional>
#include <string_view>

#include "bulkhead/util/clock.h"

namespace bulkhead {

// Parses a Retry-After header value relative to `now`.
//
// Accepted forms (surrounding spaces/tabs ignored):
//  * delta-seconds: 1*DIGIT, e.g. "120". Values too large to represent are clamped like any other.
//  * IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT" (exact RFC 9110 layout, weekday not
//  cross-checked).
//  * The obsolete HTTP-date forms recipients must still accept: RFC 850
//    ("Sunday, 06-Nov-94 08:49:37 GMT", two-digit years >= 70 are 19xx, else 20xx) and asctime
//    ("Sun Nov  6 08:49:37 1994").
//
// Returns the absolute time until which the host asked to be left alone, clamped to
// [now, now + max_delay]; a date in the past yields `now`. Anything else (empty, negative,
// fractional, trailing junk, impossible dates such as Feb 30 or hour 24) yields std::nullopt,
// meaning "no Retry-After present". max_delay is clamped to
// [0, 366 days].
std::optional<TimePoint> ParseRetryAfter(std::string_view value, TimePoint now, Duration max_delay);

}  // namespace bulkhead
