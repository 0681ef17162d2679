#include "bulkhead/dashboard/html.h"

#include <charconv>
#include <cstdio>
#include <ctime>

#include "bulkhead/util/hex.h"
#include "bulkhead/util/json.h"
#include "bulkhead/util/percent_encoding.h"
#include "bulkhead/util/time_format.h"

namespace bulkhead::dashboard {

std::string UrlEncode(std::string_view text) { return PercentEncode(text); }

std::string UrlDecode(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '+') {
      out += ' ';
    } else if (c == '%' && i + 2 < text.size() && HexDigitValue(text[i + 1]) >= 0 &&
               HexDigitValue(text[i + 2]) >= 0) {
      out += static_cast<char>(HexDigitValue(text[i + 1]) * 16 + HexDigitValue(text[i + 2]));
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

FormFields FormFields::Parse(std::string_view text) {
  FormFields f;
  while (!text.empty()) {
    size_t amp = text.find('&');
    std::string_view pair = text.substr(0, amp);
    text = amp == std::string_view::npos ? std::string_view() : text.substr(amp + 1);
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    std::string name = UrlDecode(pair.substr(0, eq));
    std::string value = eq == std::string_view::npos ? "" : UrlDecode(pair.substr(eq + 1));
    f.fields_.emplace(std::move(name), std::move(value));
  }
  return f;
}

std::string FormFields::Get(std::string_view name, std::string_view fallback) const {
  auto it = fields_.find(name);
  return it == fields_.end() ? std::string(fallback) : it->second;
}

std::vector<std::string> FormFields::GetAll(std::string_view name) const {
  std::vector<std::string> out;
  auto [b, e] = fields_.equal_range(name);
  for (auto it = b; it != e; ++it) out.push_back(it->second);
  return out;
}

int64_t FormFields::GetInt(std::string_view name, int64_t fallback, int64_t min,
                           int64_t max) const {
  std::string v = Get(name);
  int64_t n = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (v.empty() || ec != std::errc() || p != v.data() + v.size()) return fallback;
  return n < min ? min : n > max ? max : n;
}

std::string RelativeTime(TimePoint t, TimePoint now) {
  bool ahead = t > now;
  int64_t s = std::chrono::duration_cast<std::chrono::seconds>(ahead ? t - now : now - t).count();
  if (s < 2) return "just now";
  std::string amount;
  if (s < 60) {
    amount = std::to_string(s) + " s";
  } else if (s < 3600) {
    amount = std::to_string(s / 60) + " min";
  } else if (s < 86400) {
    amount = std::to_string(s / 3600) + " h";
  } else {
    amount = std::to_string(s / 86400) + " d";
  }
  return ahead ? "in " + amount : amount + " ago";
}

std::string TimeTag(TimePoint t, TimePoint now) { return TimeTagText(t, RelativeTime(t, now)); }

std::string TimeTagText(TimePoint t, std::string_view text) {
  std::time_t secs = std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char exact[40];
  std::strftime(exact, sizeof(exact), "%Y-%m-%d %H:%M:%S UTC", &tm);
  return "<time datetime=\"" + Escape(FormatRfc3339(t)) + "\" title=\"" + exact + "\">" +
         std::string(text) + "</time>";
}

std::string DurationText(Duration d) {
  int64_t ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  if (ms < 0) ms = 0;
  if (ms < 1000) return std::to_string(ms) + " ms";
  int64_t s = ms / 1000;
  if (s < 60) return std::to_string(s) + " s";
  if (s < 3600) return std::to_string(s / 60) + " min " + std::to_string(s % 60) + " s";
  return std::to_string(s / 3600) + " h " + std::to_string((s % 3600) / 60) + " min";
}

}  // namespace bulkhead::dashboard
