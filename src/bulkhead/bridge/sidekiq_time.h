// Sidekiq's timestamps in a job (created_at, enqueued_at, failed_at): which form each Sidekiq
// version writes and how bulkhead reads and writes them.
//   Sidekiq 6 and 7: float seconds since the epoch (lib/sidekiq/client.rb atomic_push and
//     job_util.rb normalize_item: `Time.now.to_f`).
//   Sidekiq 8: integer milliseconds since the epoch (Sidekiq 8.0's Changes.md: created_at,
//     enqueued_at, failed_at and retried_at are now epoch milliseconds; the wiki's "Job Format").
// A reader tells them apart as Sidekiq 8's own readers do (api.rb Queue#latency, JobRecord): a
// JSON float is seconds, an integer is milliseconds. Sorted-set scores (the dead set's) stay float
// seconds in every version (api.rb DeadSet#kill: `Time.now.to_f`).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "bulkhead/util/clock.h"

namespace bulkhead {

enum class SidekiqTimeFormat {
  kFloatSeconds,         // Sidekiq 6 and 7 (the default)
  kIntegerMilliseconds,  // Sidekiq 8
};

// The sidekiq.timestamps setting: "seconds" or "milliseconds"; nullopt for anything else.
std::optional<SidekiqTimeFormat> ParseSidekiqTimeFormat(std::string_view setting);

// `t` as Sidekiq writes it in a job: a float of seconds (microseconds kept) or integer ms.
nlohmann::json SidekiqTimestamp(TimePoint t, SidekiqTimeFormat format);
// A timestamp field of a job: a float is seconds, an integer milliseconds; nullopt when `v` is no
// number or is out of the range of times (before 1970, after 2255).
std::optional<TimePoint> ReadSidekiqTimestamp(const nlohmann::json& v);
// A sorted-set score (float seconds, as Ruby's Float#to_s writes it: "1700000000.123456").
std::string SidekiqScore(TimePoint t);

}  // namespace bulkhead
