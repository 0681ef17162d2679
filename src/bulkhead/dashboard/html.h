// The dashboard's text primitives: the one HTML escaping every piece of job data goes through,
// URL encoding for links and forms, form/query decoding, and times shown relative with the exact
// UTC time on hover. Pure functions; any thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "bulkhead/util/clock.h"
#include "bulkhead/util/html_escape.h"

namespace bulkhead::dashboard {

// Text safe inside an element and inside a double- or single-quoted attribute value: & < > " '
// become entities; bytes that are not valid UTF-8 become U+FFFD. Every value that did not come
// from the dashboard's own code passes through here.
// (util/html_escape.h, the one escaping of every HTML bulkhead writes.)
inline std::string Escape(std::string_view text) { return HtmlEscape(text); }

// Percent-encodes everything but RFC 3986 unreserved characters (for a query value or a path
// segment). A link built from job data is always base path + fixed route + "?" + encoded values,
// so it can never become a `javascript:` URL.
std::string UrlEncode(std::string_view text);
// Decodes %XX and '+' (as space); a malformed escape is kept as it is.
std::string UrlDecode(std::string_view text);

// An application/x-www-form-urlencoded body or a query string, decoded; a repeated name keeps
// every value in order.
class FormFields {
 public:
  static FormFields Parse(std::string_view text);
  // The first value of `name`, or `fallback`.
  std::string Get(std::string_view name, std::string_view fallback = "") const;
  std::vector<std::string> GetAll(std::string_view name) const;
  // The first value of `name` as a number in [min, max]; `fallback` when absent or not a number.
  int64_t GetInt(std::string_view name, int64_t fallback, int64_t min, int64_t max) const;

 private:
  std::multimap<std::string, std::string, std::less<>> fields_;
};

// "just now", "42 s ago", "3 min ago", "2 h ago", "5 d ago"; "in 3 min" for times ahead.
std::string RelativeTime(TimePoint t, TimePoint now);
// <time datetime="RFC3339" title="YYYY-MM-DD HH:MM:SS UTC">3 min ago</time>
std::string TimeTag(TimePoint t, TimePoint now);
// The same <time> showing `text` (HTML, escaped by the caller), e.g. a duration since `t`.
std::string TimeTagText(TimePoint t, std::string_view text);
// A duration as "850 ms", "12 s", "3 min 4 s", "2 h 5 min".
std::string DurationText(Duration d);

}  // namespace bulkhead::dashboard
