#include "bulkhead/view/cron_view.h"

#include <fmt/printf.h>

#include "bulkhead/util/time_format.h"

namespace bulkhead {
namespace {

using nlohmann::json;

int64_t Int(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_number() ? it->get<int64_t>() : 0;
}

std::string String(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "?";
}

std::optional<TimePoint> Time(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return std::nullopt;
  auto t = ParseRfc3339(it->get<std::string>());
  return t.ok() ? std::optional<TimePoint>(*t) : std::nullopt;
}

}  // namespace

json CronJson(const std::vector<CronEntrySnapshot>& cron) {
  json out = json::object();
  for (const CronEntrySnapshot& c : cron) {
    out[c.name] = {{"schedule", c.schedule},
                   {"next_run", FormatRfc3339(c.next_run)},
                   {"last_run", c.last_run ? json(FormatRfc3339(*c.last_run)) : json(nullptr)},
                   {"enqueued", c.enqueued},
                   {"lost", c.lost}};
  }
  return out;
}

std::vector<CronEntrySnapshot> ParseCronJson(const json& cron) {
  std::vector<CronEntrySnapshot> out;
  if (!cron.is_object()) return out;
  for (const auto& [name, c] : cron.items()) {
    if (!c.is_object()) continue;
    out.push_back(CronEntrySnapshot{.name = name,
                                    .schedule = String(c, "schedule"),
                                    .next_run = Time(c, "next_run").value_or(TimePoint{}),
                                    .last_run = Time(c, "last_run"),
                                    .enqueued = Int(c, "enqueued"),
                                    .lost = Int(c, "lost")});
  }
  return out;
}

void AppendCronText(std::string& out, const std::vector<CronEntrySnapshot>& cron) {
  if (cron.empty()) return;
  out += fmt::sprintf("\n%-24s %-20s %-27s %s\n", "CRON", "SCHEDULE", "NEXT_RUN", "LAST_RUN");
  for (const CronEntrySnapshot& c : cron) {
    std::string last = c.last_run ? FormatRfc3339(*c.last_run) : "-";
    out +=
        fmt::sprintf("%-24s %-20s %-27s %s\n", c.name, c.schedule, FormatRfc3339(c.next_run), last);
  }
}

}  // namespace bulkhead
