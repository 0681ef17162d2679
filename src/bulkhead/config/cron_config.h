// [[cron]] entries of the config file, in Faktory's form (docs/research/faktory-enterprise.md
// §4):
//   [[cron]]
//     schedule = "*/5 * * * *"       # required; see util/cron_schedule.h
//     name = "five"                  # optional (bulkhead's): the entry's identity in the store
//     [cron.job]
//       type = "FiveJob"             # required
//       queue = "critical"           # default "default"
//       args = [1, "two"]            # default []
//       retry = 3                    # optional
//       reserve_for = 600            # optional
//       [cron.job.custom]            # optional, any keys (unique_for, expires_in, ...)
#pragma once

#include <toml++/toml.h>

#include <vector>

#include "bulkhead/config/config.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

// The entries of the `cron` key (an array of tables). InvalidArgument names the entry (its number
// from 1, and its type or name), the field, the problem and the line: unknown keys, wrong types, a
// bad schedule, two entries with one name.
Result<std::vector<CronEntry>> ReadCronEntries(const toml::node& node);

}  // namespace bulkhead
