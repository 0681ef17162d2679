#include "bulkhead/config/settings_doc.h"

#include <algorithm>
#include <vector>

namespace bulkhead {
namespace {

std::vector<std::string> Split(const std::string& key) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t dot; (dot = key.find('.', start)) != std::string::npos; start = dot + 1) {
    parts.push_back(key.substr(start, dot - start));
  }
  parts.push_back(key.substr(start));
  return parts;
}

// The one index at which `a` and `b` differ, or -1 (none, or more than one, or other lengths).
int OnlyDifference(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  if (a.size() != b.size()) return -1;
  int at = -1;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] == b[i]) continue;
    if (at >= 0) return -1;
    at = static_cast<int>(i);
  }
  return at;
}

bool SameDocs(const Setting& a, const Setting& b) {
  return a.doc == b.doc && a.details == b.details && a.flag.empty() && b.flag.empty() &&
         DefaultText(a) == DefaultText(b) && ValuesText(a) == ValuesText(b);
}

// The key cell of rows [first, last): "`listen` / `--listen`", or for rows differing in one part
// of the key, "`delivery.{webpush,activitypub,webhook}.total_timeout_ms`".
std::string KeyCell(const std::vector<Setting>& rows, size_t first, size_t last) {
  std::vector<std::string> parts = Split(rows[first].key);
  std::string key = rows[first].key;
  if (last - first > 1) {
    int at = OnlyDifference(parts, Split(rows[first + 1].key));
    std::string choices;
    for (size_t i = first; i < last; ++i) {
      choices += (i == first ? "" : ",") + Split(rows[i].key)[at];
    }
    parts[at] = "{" + choices + "}";
    key.clear();
    for (const std::string& p : parts) key += (key.empty() ? "" : ".") + p;
  }
  std::string cell = "`" + key + "`";
  if (!rows[first].flag.empty()) cell += " / `" + rows[first].flag + "`";
  return cell;
}

std::string DefaultCell(const Setting& s) {
  std::string d = DefaultText(s);
  return d.rfind("none", 0) == 0 ? d : "`" + d + "`";
}

}  // namespace

std::string DefaultText(const Setting& setting) {
  if (!setting.shown_default.empty()) return setting.shown_default;
  SettingValue v = GetSetting(setting, Config{});
  if (const auto* s = std::get_if<std::string>(&v)) return s->empty() ? "none" : *s;
  return TomlLiteral(v);
}

std::string ValuesText(const Setting& setting) {
  if (!setting.values.empty()) return setting.values;
  if (!setting.allowed.empty()) {
    std::string out;
    for (const std::string& a : setting.allowed) out += (out.empty() ? "" : ", ") + a;
    return out;
  }
  std::string off = setting.zero_is_off ? " (0 = off)" : "";
  if (setting.min && setting.max) {
    return std::to_string(*setting.min) + "–" + std::to_string(*setting.max) + off;
  }
  if (setting.min) return "≥ " + std::to_string(*setting.min) + off;
  if (setting.max) return "≤ " + std::to_string(*setting.max);
  return "";
}

std::string SettingsMarkdown() {
  const std::vector<Setting>& rows = Settings();
  std::string out =
      "| setting (TOML key / flag) | default | values | meaning |\n|---|---|---|---|\n";
  for (size_t first = 0; first < rows.size();) {
    size_t last = first + 1;
    int at =
        last < rows.size() ? OnlyDifference(Split(rows[first].key), Split(rows[last].key)) : -1;
    while (at >= 0 && last < rows.size() && SameDocs(rows[first], rows[last]) &&
           OnlyDifference(Split(rows[first].key), Split(rows[last].key)) == at) {
      ++last;
    }
    const Setting& s = rows[first];
    std::string meaning = s.doc + (s.details.empty() ? "" : "; " + s.details);
    out += "| " + KeyCell(rows, first, last) + " | " + DefaultCell(s) + " | " + ValuesText(s) +
           " | " + meaning + " |\n";
    first = last;
  }
  return out;
}

std::string SettingsHelp() {
  size_t width = 0;
  for (const Setting& s : Settings()) width = std::max(width, s.key.size());
  std::string out;
  for (const Setting& s : Settings()) {
    out += "  " + s.key + std::string(width + 2 - s.key.size(), ' ') + DefaultText(s) + "\n";
  }
  return out;
}

}  // namespace bulkhead
