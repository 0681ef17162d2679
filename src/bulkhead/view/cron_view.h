// The [[cron]] entries' figures (engine_snapshot.h CronEntrySnapshot) in INFO and
// `bulkhead stats`: the "cron" object of INFO's "faktory" (present only when an entry is
// configured), its reading back for `bulkhead stats`, and the CRON table of `bulkhead stats`.
//
// INFO shape (under "faktory"; bulkhead's own, Faktory documents no INFO field for cron):
//   "cron": {"FiveJob": {"schedule": "*/5 * * * *", "next_run": RFC 3339,
//                        "last_run": RFC 3339 or null (none yet), "enqueued": 7, "lost": 1}}
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bulkhead/engine/engine_snapshot.h"

namespace bulkhead {

// The "cron" object, keyed by entry name.
nlohmann::json CronJson(const std::vector<CronEntrySnapshot>& cron);
// The inverse of CronJson, in name order (a JSON object keeps no config order). Entries that are
// not objects are skipped; a missing number is 0, a missing string "?", a next_run that is not
// RFC 3339 the epoch, a last_run that is not RFC 3339 unset.
std::vector<CronEntrySnapshot> ParseCronJson(const nlohmann::json& cron);

// Appends the CRON table (nothing when there is no entry): name, schedule, next run and last run
// as exact UTC (RFC 3339), "-" for an entry never run.
void AppendCronText(std::string& out, const std::vector<CronEntrySnapshot>& cron);

}  // namespace bulkhead
