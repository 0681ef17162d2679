// The entry the bridge adds to Sidekiq's dead set (the sorted set `dead`) for a job it cannot take,
// as Sidekiq's own retry code writes one (lib/sidekiq/job_retry.rb attempt_retry and
// send_to_morgue, api.rb DeadSet#kill): the job's JSON with `error_class`, `error_message` (the
// reason) and `failed_at` added, scored by the time in float seconds, the set then trimmed by age
// and by count (sidekiq_scripts/settle.lua). Sidekiq's Web UI lists it under Dead, where "Retry"
// puts it back in its queue.
//
// An entry that is not a JSON object (not JSON at all, too deep, an array...) is kept whole all
// the same, as the one argument of a job of class kUnreadableClass, so that nothing is lost and
// the Web UI can still show it.
#pragma once

#include <string>
#include <string_view>

#include "bulkhead/bridge/sidekiq_time.h"
#include "bulkhead/util/clock.h"

namespace bulkhead {

inline constexpr char kRefusedErrorClass[] = "Bulkhead::RefusedJob";
inline constexpr char kUnreadableClass[] = "Bulkhead::UnreadableJob";

struct DeadEntryContext {
  std::string queue;   // the Sidekiq queue it was taken from (for an unreadable entry)
  std::string reason;  // the error_message: why it was not taken
  TimePoint now{};
  SidekiqTimeFormat format = SidekiqTimeFormat::kFloatSeconds;
  int max_json_depth = 64;
};

// The dead set member for the Sidekiq queue entry `text`.
std::string SidekiqDeadEntry(std::string_view text, const DeadEntryContext& context);

}  // namespace bulkhead
