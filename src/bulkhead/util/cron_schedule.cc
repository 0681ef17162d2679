#include "bulkhead/util/cron_schedule.h"

#include <array>
#include <cctype>
#include <charconv>
#include <vector>

namespace bulkhead {
namespace {

using std::chrono::days;
using std::chrono::minutes;

constexpr int64_t kSearchDays = 366 * 5;

struct FieldSpec {
  const char* name;
  int lo, hi;
  const char* const* names;  // names[i] is value lo + i (null: numbers only)
};
constexpr const char* kMonthNames[] = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN",  "JUL",
                                       "AUG", "SEP", "OCT", "NOV", "DEC", nullptr};
constexpr const char* kDayNames[] = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT", nullptr};
constexpr FieldSpec kFields[] = {{"minute", 0, 59, nullptr},
                                 {"hour", 0, 23, nullptr},
                                 {"day-of-month", 1, 31, nullptr},
                                 {"month", 1, 12, kMonthNames},
                                 {"day-of-week", 0, 7, kDayNames}};

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t end = s.find(sep, start);
    out.push_back(s.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

Status FieldError(const FieldSpec& f, const std::string& what) {
  return Status::InvalidArgument(std::string(f.name) + ": " + what);
}

Result<int> Value(const FieldSpec& f, std::string_view text) {
  if (f.names) {
    for (int i = 0; f.names[i]; ++i) {
      std::string_view name = f.names[i];
      if (text.size() == 3 &&
          std::equal(text.begin(), text.end(), name.begin(), [](char a, char b) {
            return std::toupper(static_cast<unsigned char>(a)) == b;
          })) {
        return f.lo + i;
      }
    }
  }
  int v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    return FieldError(f, "\"" + std::string(text) + "\" is not a number");
  }
  if (v < f.lo || v > f.hi) {
    return FieldError(f, std::to_string(v) + " is out of range " + std::to_string(f.lo) + "-" +
                             std::to_string(f.hi));
  }
  return v;
}

// Sets bits[v - offset] for every value `text` (one field) names.
template <size_t N>
Status ParseField(const FieldSpec& f, std::string_view text, std::bitset<N>& bits) {
  for (std::string_view part : Split(text, ',')) {
    int step = 1;
    if (size_t slash = part.find('/'); slash != std::string_view::npos) {
      auto s = Value(FieldSpec{f.name, 1, f.hi + 1, nullptr}, part.substr(slash + 1));
      if (!s.ok()) return FieldError(f, "bad step in \"" + std::string(part) + "\"");
      step = *s;
      part = part.substr(0, slash);
    }
    int lo = f.lo, hi = f.hi;
    if (part != "*") {
      size_t dash = part.find('-');
      auto a = Value(f, part.substr(0, dash));
      if (!a.ok()) return a.status();
      lo = hi = *a;
      if (dash != std::string_view::npos) {
        auto b = Value(f, part.substr(dash + 1));
        if (!b.ok()) return b.status();
        hi = *b;
      } else if (step != 1) {
        hi = f.hi;  // "a/n": from a to the end
      }
      if (lo > hi) return FieldError(f, "range \"" + std::string(part) + "\" runs backwards");
    }
    for (int v = lo; v <= hi; v += step) bits.set(f.names == kDayNames ? v % 7 : v);
  }
  return Status::Ok();
}

Result<std::chrono::seconds> ParseEvery(std::string_view text) {
  auto bad = [&] {
    return Status::InvalidArgument("@every: \"" + std::string(text) +
                                   "\" is not a duration such as 30s, 5m or 1h30m");
  };
  if (text.empty()) return bad();
  int64_t total = 0;
  while (!text.empty()) {
    size_t i = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    if (i == 0 || i == text.size() || i > 9) return bad();
    int64_t n = std::stoll(std::string(text.substr(0, i)));
    char unit = text[i];
    total += unit == 'h' ? n * 3600 : unit == 'm' ? n * 60 : unit == 's' ? n : -1'000'000'000'000;
    if (total < 0) return bad();
    text.remove_prefix(i + 1);
  }
  if (total < 1) return Status::InvalidArgument("@every: the interval must be at least 1s");
  return std::chrono::seconds(total);
}

constexpr std::pair<std::string_view, std::string_view> kDescriptors[] = {
    {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
    {"@weekly", "0 0 * * 0"}, {"@daily", "0 0 * * *"},    {"@midnight", "0 0 * * *"},
    {"@hourly", "0 * * * *"}};

}  // namespace

Result<CronSchedule> CronSchedule::Parse(std::string_view text) {
  CronSchedule s;
  s.text_ = std::string(text);
  std::string_view fields = text;
  if (text.starts_with("@every ")) {
    auto every = ParseEvery(text.substr(7));
    if (!every.ok()) return every.status();
    s.every_ = *every;
    return s;
  }
  if (text.starts_with("@")) {
    fields = {};
    for (auto [name, expansion] : kDescriptors) {
      if (text == name) fields = expansion;
    }
    if (fields.empty()) {
      return Status::InvalidArgument(
          "unknown descriptor \"" + std::string(text) +
          "\" (@yearly, @monthly, @weekly, @daily, @hourly or @every DURATION)");
    }
  }
  std::vector<std::string_view> parts;
  for (std::string_view p : Split(fields, ' ')) {
    if (!p.empty()) parts.push_back(p);
  }
  if (parts.size() != 5) {
    return Status::InvalidArgument("\"" + std::string(text) +
                                   "\" needs 5 fields (minute hour day-of-month month "
                                   "day-of-week), has " +
                                   std::to_string(parts.size()));
  }
  Status st = ParseField(kFields[0], parts[0], s.minutes_);
  if (st.ok()) st = ParseField(kFields[1], parts[1], s.hours_);
  if (st.ok()) st = ParseField(kFields[2], parts[2], s.days_);
  if (st.ok()) st = ParseField(kFields[3], parts[3], s.months_);
  if (st.ok()) st = ParseField(kFields[4], parts[4], s.weekdays_);
  if (!st.ok()) return st;
  s.days_star_ = parts[2].starts_with('*');
  s.weekdays_star_ = parts[4].starts_with('*');
  return s;
}

bool CronSchedule::DayMatches(int64_t day) const {
  std::chrono::sys_days d{days(day)};
  std::chrono::year_month_day ymd{d};
  if (!months_.test(static_cast<unsigned>(ymd.month()))) return false;
  bool dom = days_.test(static_cast<unsigned>(ymd.day()));
  bool dow = weekdays_.test(std::chrono::weekday(d).c_encoding());
  if (days_star_ || weekdays_star_) return dom && dow;
  return dom || dow;
}

std::optional<int> CronSchedule::MinuteOfDay(int from, int to, bool forward) const {
  for (int i = 0; i <= to - from; ++i) {
    int m = forward ? from + i : to - i;
    if (hours_.test(m / 60) && minutes_.test(m % 60)) return m;
  }
  return std::nullopt;
}

TimePoint CronSchedule::Next(TimePoint t) const {
  if (every_.count() > 0) {
    auto since = std::chrono::floor<std::chrono::seconds>(t.time_since_epoch());
    return TimePoint(std::chrono::duration_cast<Duration>((since / every_ + 1) * every_));
  }
  auto minute = std::chrono::floor<minutes>(t.time_since_epoch()) + minutes(1);
  int64_t day = std::chrono::floor<days>(minute).count();
  int from = static_cast<int>((minute - days(day)).count());
  for (int64_t i = 0; i <= kSearchDays; ++i, from = 0) {
    if (!DayMatches(day + i)) continue;
    if (auto m = MinuteOfDay(from, 1439, /*forward=*/true)) {
      return TimePoint(std::chrono::duration_cast<Duration>(days(day + i) + minutes(*m)));
    }
  }
  return TimePoint::max();
}

std::optional<TimePoint> CronSchedule::Latest(TimePoint t) const {
  if (every_.count() > 0) {
    auto since = std::chrono::floor<std::chrono::seconds>(t.time_since_epoch());
    return TimePoint(std::chrono::duration_cast<Duration>(since / every_ * every_));
  }
  auto minute = std::chrono::floor<minutes>(t.time_since_epoch());
  int64_t day = std::chrono::floor<days>(minute).count();
  int to = static_cast<int>((minute - days(day)).count());
  for (int64_t i = 0; i <= kSearchDays; ++i, to = 1439) {
    if (!DayMatches(day - i)) continue;
    if (auto m = MinuteOfDay(0, to, /*forward=*/false)) {
      return TimePoint(std::chrono::duration_cast<Duration>(days(day - i) + minutes(*m)));
    }
  }
  return std::nullopt;
}

}  // namespace bulkhead
