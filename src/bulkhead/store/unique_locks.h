// UniqueLocks: the store's part for unique jobs (Store::unique_locks(); the rules of a lock are in
// unique_lock.h). Store's contract (store.h) holds for every call.
#pragma once

#include <string>

#include "bulkhead/store/job_record.h"
#include "bulkhead/store/store_callbacks.h"
#include "bulkhead/store/unique_lock.h"
#include "bulkhead/util/clock.h"

namespace bulkhead {

class UniqueLocks : public StoreCallbacks {
 public:
  virtual ~UniqueLocks() = default;

  // Unique jobs: PUSH and the lock in one atomic change. AlreadyExists when the jid is known (as
  // Push). Otherwise, when `lock.key` is free at `now` (never taken, expired, released, or held by
  // job.jid itself), takes it for job.jid until lock.until and adds the job as Push does; when
  // another jid holds it, changes nothing and answers NotUniqueStatus(). A job holds at most one
  // lock. Ack releases the lock its jid holds in the same change; FAIL, retries, death and removal
  // keep it until it expires. FLUSH deletes every lock. Locks survive a restart (sqlite:, Redis).
  virtual void Push(JobRecord job, const UniqueLock& lock, TimePoint now, Done durable) = 0;
  // Releases the lock `jid` holds, if any (no error when it holds none).
  virtual void Release(const std::string& jid, Done durable) = 0;
};

}  // namespace bulkhead
