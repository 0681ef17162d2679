// UniqueLock: the uniqueness lock a unique job takes with its PUSH (UniqueLocks::Push), and the
// reply a duplicate gets. The key is the engine's (engine/unique_jobs.h: a hash of jobtype, args
// and queue); the store only keeps key -> holder jid until `until`.
#pragma once

#include <string>
#include <string_view>

#include "bulkhead/util/clock.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

struct UniqueLock {
  std::string key;  // never holds '|', a newline or a glob character (hex digits)
  TimePoint until;  // the lock expires then unless released before
};

// Faktory's coded error for a duplicate: sent as "-NOTUNIQUE Job not unique"; inside a PUSHB reply
// map the whole text "NOTUNIQUE Job not unique" (Faktory puts err.Error() there).
inline constexpr std::string_view kNotUniqueCode = "NOTUNIQUE";
inline constexpr std::string_view kNotUniqueMessage = "Job not unique";
inline constexpr char kNotUniqueText[] = "NOTUNIQUE Job not unique";

// The status a store answers a UniqueLocks::Push whose lock another job holds.
inline Status NotUniqueStatus() { return Status::FailedPrecondition(kNotUniqueText); }
inline bool IsNotUnique(const Status& s) {
  return s.code() == StatusCode::kFailedPrecondition && s.message() == kNotUniqueText;
}

}  // namespace bulkhead
