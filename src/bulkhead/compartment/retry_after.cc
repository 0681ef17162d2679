#include "bulkhead/compartment/retry_after.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>

#include "bulkhead/util/ascii.h"

namespace bulkhead {
namespace {

constexpr std::array<std::string_view, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
constexpr std::array<std::string_view, 7> kShortDays = {"Mon", "Tue", "Wed", "Thu",
                                                        "Fri", "Sat", "Sun"};
constexpr std::array<std::string_view, 7> kLongDays = {
    "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// A cursor over the header value; every reader fails without consuming on mismatch.
class Reader {
 public:
  explicit Reader(std::string_view s) : s_(s) {}
  bool done() const { return pos_ == s_.size(); }

  bool Lit(std::string_view lit) {
    if (s_.substr(pos_, lit.size()) != lit) return false;
    pos_ += lit.size();
    return true;
  }
  // Exactly n digits.
  bool Digits(size_t n, int& out) {
    if (pos_ + n > s_.size()) return false;
    int v = 0;
    for (size_t i = 0; i < n; ++i) {
      if (!IsDigit(s_[pos_ + i])) return false;
      v = v * 10 + (s_[pos_ + i] - '0');
    }
    out = v;
    pos_ += n;
    return true;
  }
  template <size_t N>
  bool OneOf(const std::array<std::string_view, N>& names, int& index) {
    for (size_t i = 0; i < N; ++i) {
      if (Lit(names[i])) {
        index = static_cast<int>(i);
        return true;
      }
    }
    return false;
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;
};

struct DateParts {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
};

bool ReadTime(Reader& r, DateParts& d) {
  return r.Digits(2, d.hour) && r.Lit(":") && r.Digits(2, d.minute) && r.Lit(":") &&
         r.Digits(2, d.second);
}

bool ReadMonth(Reader& r, DateParts& d) {
  int m = 0;
  if (!r.OneOf(kMonths, m)) return false;
  d.month = m + 1;
  return true;
}

// "Sun, 06 Nov 1994 08:49:37 GMT"
bool ParseImfFixdate(std::string_view s, DateParts& d) {
  Reader r(s);
  int wd = 0;
  return r.OneOf(kShortDays, wd) && r.Lit(", ") && r.Digits(2, d.day) && r.Lit(" ") &&
         ReadMonth(r, d) && r.Lit(" ") && r.Digits(4, d.year) && r.Lit(" ") && ReadTime(r, d) &&
         r.Lit(" GMT") && r.done();
}

// "Sunday, 06-Nov-94 08:49:37 GMT"
bool ParseRfc850(std::string_view s, DateParts& d) {
  Reader r(s);
  int wd = 0;
  if (!(r.OneOf(kLongDays, wd) && r.Lit(", ") && r.Digits(2, d.day) && r.Lit("-") &&
        ReadMonth(r, d) && r.Lit("-") && r.Digits(2, d.year) && r.Lit(" ") && ReadTime(r, d) &&
        r.Lit(" GMT") && r.done())) {
    return false;
  }
  d.year += d.year >= 70 ? 1900 : 2000;
  return true;
}

// "Sun Nov  6 08:49:37 1994" (day padded with a space) or "Sun Nov 16 08:49:37 1994".
bool ParseAsctime(std::string_view s, DateParts& d) {
  Reader r(s);
  int wd = 0;
  if (!(r.OneOf(kShortDays, wd) && r.Lit(" ") && ReadMonth(r, d) && r.Lit(" "))) return false;
  if (r.Lit(" ")) {
    if (!r.Digits(1, d.day)) return false;
  } else if (!r.Digits(2, d.day)) {
    return false;
  }
  return r.Lit(" ") && ReadTime(r, d) && r.Lit(" ") && r.Digits(4, d.year) && r.done();
}

// Seconds since the epoch; kept in seconds because years far from now overflow a nanosecond
// TimePoint.
std::optional<int64_t> ToUnixSeconds(const DateParts& d) {
  using namespace std::chrono;
  year_month_day ymd{year(d.year), month(static_cast<unsigned>(d.month)),
                     day(static_cast<unsigned>(d.day))};
  // Leap seconds (60) are allowed by the grammar; treat them as the next second.
  if (!ymd.ok() || d.hour > 23 || d.minute > 59 || d.second > 60) return std::nullopt;
  sys_seconds t = sys_days(ymd) + hours(d.hour) + minutes(d.minute) + seconds(d.second);
  return t.time_since_epoch().count();
}

}  // namespace

std::optional<TimePoint> ParseRetryAfter(std::string_view value, TimePoint now,
                                         Duration max_delay) {
  // Keep now + max_delay far from overflow whatever the caller passes.
  max_delay = std::clamp<Duration>(max_delay, Duration::zero(), std::chrono::hours(24 * 366));
  const std::string_view s = TrimAscii(value);
  if (s.empty()) return std::nullopt;

  if (IsDigit(s.front())) {
    // delta-seconds. Saturate instead of overflowing; the clamp below caps it anyway.
    const int64_t max_seconds = std::chrono::duration_cast<std::chrono::seconds>(max_delay).count();
    int64_t secs = 0;
    for (char c : s) {
      if (!IsDigit(c)) return std::nullopt;
      if (secs <= max_seconds) secs = secs * 10 + (c - '0');
    }
    if (secs >= max_seconds) return now + max_delay;
    return now + std::chrono::seconds(secs);
  }

  DateParts d;
  if (!ParseImfFixdate(s, d) && !ParseRfc850(s, d) && !ParseAsctime(s, d)) return std::nullopt;
  std::optional<int64_t> t = ToUnixSeconds(d);
  if (!t) return std::nullopt;
  const int64_t now_us = ToUnixMicros(now);
  const int64_t max_us = std::chrono::duration_cast<std::chrono::microseconds>(max_delay).count();
  // Both values are far from int64 limits: years 0000..9999 in seconds, now in microseconds.
  const int64_t target_s = *t;
  const int64_t now_s = now_us / 1'000'000;
  if (target_s - now_s > max_us / 1'000'000 + 1) return now + max_delay;
  const int64_t delta_us = target_s * 1'000'000 - now_us;
  if (delta_us <= 0) return now;
  if (delta_us >= max_us) return now + max_delay;
  return now + std::chrono::microseconds(delta_us);
}

}  // namespace bulkhead
