#include "bulkhead/util/time_format.h"

#include <cctype>
#include <chrono>
#include <cstdio>

namespace bulkhead {
namespace {

bool ReadDigits(std::string_view s, size_t& pos, size_t n, int& out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = 0; i < n; ++i) {
    char c = s[pos + i];
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    v = v * 10 + (c - '0');
  }
  out = v;
  pos += n;
  return true;
}

bool Expect(std::string_view s, size_t& pos, char c) {
  if (pos >= s.size() || s[pos] != c) return false;
  ++pos;
  return true;
}

}  // namespace

std::string FormatRfc3339(TimePoint t) {
  std::string out;
  AppendRfc3339(out, t);
  return out;
}

void AppendRfc3339(std::string& out, TimePoint t) {
  using namespace std::chrono;
  auto us = ToUnixMicros(t);
  auto day = floor<days>(sys_time<microseconds>(microseconds(us)));
  year_month_day ymd(day);
  int64_t rem = us - duration_cast<microseconds>(day.time_since_epoch()).count();
  int hh = static_cast<int>(rem / 3'600'000'000LL);
  int mm = static_cast<int>(rem / 60'000'000LL % 60);
  int ss = static_cast<int>(rem / 1'000'000LL % 60);
  int frac = static_cast<int>(rem % 1'000'000LL);
  // Digits written by hand: this runs for every job handed out (its created_at and enqueued_at),
  // and snprintf's format parsing cost more than the rest of the step.
  char buf[32];
  char* p = buf;
  auto digits = [&p](int64_t v, int width) {
    for (int i = width - 1; i >= 0; --i, v /= 10) p[i] = static_cast<char>('0' + v % 10);
    p += width;
  };
  digits(int(ymd.year()), 4);  // 1678..2262: a TimePoint's range
  *p++ = '-';
  digits(unsigned(ymd.month()), 2);
  *p++ = '-';
  digits(unsigned(ymd.day()), 2);
  *p++ = 'T';
  digits(hh, 2);
  *p++ = ':';
  digits(mm, 2);
  *p++ = ':';
  digits(ss, 2);
  if (frac != 0) {
    *p++ = '.';
    int width = 6;
    while (frac % 10 == 0) {  // trailing zeros dropped
      frac /= 10;
      --width;
    }
    digits(frac, width);
  }
  *p++ = 'Z';
  out.append(buf, static_cast<size_t>(p - buf));
}

Result<TimePoint> ParseRfc3339(std::string_view s) {
  using namespace std::chrono;
  auto bad = [&](const char* why) {
    return Status::InvalidArgument("invalid RFC 3339 timestamp \"" + std::string(s) + "\": " + why);
  };
  size_t p = 0;
  int Y, M, D, h, m, sec;
  if (!ReadDigits(s, p, 4, Y) || !Expect(s, p, '-') || !ReadDigits(s, p, 2, M) ||
      !Expect(s, p, '-') || !ReadDigits(s, p, 2, D)) {
    return bad("expected YYYY-MM-DD");
  }
  if (p >= s.size() || (s[p] != 'T' && s[p] != 't' && s[p] != ' ')) return bad("expected 'T'");
  ++p;
  if (!ReadDigits(s, p, 2, h) || !Expect(s, p, ':') || !ReadDigits(s, p, 2, m) ||
      !Expect(s, p, ':') || !ReadDigits(s, p, 2, sec)) {
    return bad("expected HH:MM:SS");
  }
  int64_t frac_us = 0;
  if (p < s.size() && s[p] == '.') {
    ++p;
    size_t start = p;
    int64_t scale = 100000;
    while (p < s.size() && std::isdigit(static_cast<unsigned char>(s[p]))) {
      if (scale > 0) {
        frac_us += (s[p] - '0') * scale;
        scale /= 10;
      }
      ++p;
    }
    if (p == start) return bad("empty fraction");
  }
  int offset_min = 0;
  if (p < s.size() && (s[p] == 'Z' || s[p] == 'z')) {
    ++p;
  } else if (p < s.size() && (s[p] == '+' || s[p] == '-')) {
    int sign = s[p] == '-' ? -1 : 1;
    ++p;
    int oh, om;
    if (!ReadDigits(s, p, 2, oh) || !Expect(s, p, ':') || !ReadDigits(s, p, 2, om)) {
      return bad("expected offset +HH:MM");
    }
    offset_min = sign * (oh * 60 + om);
  } else {
    return bad("missing time zone ('Z' or +HH:MM)");
  }
  if (p != s.size()) return bad("trailing characters");
  year_month_day ymd{year(Y), month(M), day(D)};
  if (!ymd.ok() || h > 23 || m > 59 || sec > 60) return bad("field out of range");
  // A TimePoint counts nanoseconds in an int64: 1677-09-21 to 2262-04-11. Whole years inside that
  // span, with months to spare for offsets and for deadlines added to the time, and no overflow.
  if (Y < kMinRfc3339Year || Y > kMaxRfc3339Year) {
    return bad("year out of range (1678 to 2261)");
  }
  auto tp = sys_days(ymd) + hours(h) + minutes(m) + seconds(sec) + microseconds(frac_us) -
            minutes(offset_min);
  return TimePoint(duration_cast<Duration>(tp.time_since_epoch()));
}

std::string FormatDate(TimePoint t) { return FormatRfc3339(t).substr(0, 10); }

}  // namespace bulkhead
