#include "bulkhead/view/cron_view.h"

#include <fmt/printf.h>

#include "bulkhead/util/time_format.h"
#include "bulkhead/view/json_read.h"

namespace bulkhead {
namespace {

using nlohmann::json;

using namespace json_read;

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
                                    .next_run = ReadTime(c, "next_run").value_or(TimePoint{}),
                                    .last_run = ReadTime(c, "last_run"),
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
