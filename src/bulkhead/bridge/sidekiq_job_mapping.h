// How a Sidekiq job (one entry of a Sidekiq queue, the JSON Sidekiq::Client#push writes) becomes
// the Faktory job bulkhead stores (docs/deliveries.md, "From Sidekiq", is the contract for apps):
//   class      -> jobtype; `webpush`, `activitypub`, `webhook` are run by the server, any other
//                 class waits in the bulkhead queue named by the job's `queue` for Faktory workers.
//                 ActiveJob's wrappers (ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper,
//                 Sidekiq 7.3+'s Sidekiq::ActiveJob::Wrapper) give the class `wrapped` names.
//   args, jid  -> args, jid, unchanged
//   queue      -> queue (absent: "default", Sidekiq's default)
//   retry      -> retry: true or absent -> absent (the job type's default), false -> 0 (discarded
//                 at its first failure, as Sidekiq drops it), N >= 1 -> N, 0 or less -> -1 (dead at
//                 the first failure, as Sidekiq's morgue takes it); with `dead: false`, 0 or less
//                 -> 0 (dropped instead of dead); any other value -> absent (Sidekiq's
//                 retry_attempts_from takes the default for anything but an Integer). Rules:
//                 Sidekiq's lib/sidekiq/job_retry.rb (local, attempt_retry, retries_exhausted).
//   created_at -> created_at (RFC 3339), read as sidekiq_time.h says
//   the rest   -> custom.sidekiq: the Sidekiq job without its args (class, wrapped, retry, dead,
//                 enqueued_at, tags, ...), for workers that want them
// A Sidekiq `at` (a scheduled job's time) is not read: a job in a queue is due.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "bulkhead/util/status.h"

namespace bulkhead {

inline constexpr char kActiveJobWrapper[] = "ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper";
inline constexpr char kSidekiqActiveJobWrapper[] = "Sidekiq::ActiveJob::Wrapper";

struct SidekiqMappingLimits {
  size_t max_job_bytes = 1024 * 1024;  // a longer entry is refused
  int max_json_depth = 64;             // as PUSH (max_json_depth)
};

// The Faktory job document for one Sidekiq queue entry, to be checked as a PUSH is
// (ParseJobDocument). InvalidArgument names why the entry cannot be taken: over the size limit,
// not JSON, not an object, no class, a class that is not a non-empty string or that holds a control
// character, args that are not an array. The message becomes the dead set entry's error_message.
Result<nlohmann::json> MapSidekiqJob(std::string_view text, const SidekiqMappingLimits& limits);

// Sidekiq's `retry` (and `dead`) of `job` as Faktory's retry (see the file comment); nullopt:
// none (the job type's default).
std::optional<int> FaktoryRetryOf(const nlohmann::json& job);

}  // namespace bulkhead
