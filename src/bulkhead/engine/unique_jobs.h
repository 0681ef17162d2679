// Unique jobs (Faktory Enterprise's "Unique Jobs", docs/research/faktory-enterprise.md §2): a job
// pushed with `custom.unique_for` (seconds) takes a lock on (jobtype, args, queue) with its PUSH
// (UniqueLocks::Push); a job of the same key pushed while the lock is held gets
// "-NOTUNIQUE Job not unique". `custom.unique_until` says when the lock goes before its time:
// "success" (default: at ACK, which the store does) or "start" (at FETCH, which the engine does).
// A job pushed without `unique_for` neither checks nor takes a lock.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "bulkhead/store/job_record.h"
#include "bulkhead/store/unique_lock.h"
#include "bulkhead/util/clock.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

// The lock `job` takes with its PUSH at `now` (doc: its payload, parsed), or nullopt for a job that
// is not unique. The lock lasts unique_for seconds, counted from the job's due time for a
// scheduled job (Faktory: "the uniqueness period includes the delay time"). InvalidArgument names
// the field for a unique_for that is not a positive number, or a unique_until that is neither
// "success" nor "start".
Result<std::optional<UniqueLock>> UniqueLockFor(const nlohmann::json& doc, const JobRecord& job,
                                                TimePoint now);

// The lock key of (jobtype, args, queue): SHA-256 in hex over the jobtype, the queue and the args
// as canonical JSON (object keys sorted), so that {"a":1,"b":2} and {"b":2,"a":1} are one job.
std::string UniqueKey(const std::string& jobtype, const nlohmann::json& args,
                      const std::string& queue);

// True when `doc` (a job's payload) asks for its lock to go when it is fetched.
bool UniqueUntilStart(const nlohmann::json& doc);

}  // namespace bulkhead
