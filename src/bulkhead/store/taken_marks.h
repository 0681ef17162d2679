// TakenMarks: a store step for jobs taken from another system (the Sidekiq bridge, bridge/), so
// that a job taken twice enters the store once. A taker that cannot move a job out of its source
// and into this store atomically (the source is another Redis) takes it in three steps: move it
// into an in-progress list of its own in the source, PushMarked it here, remove it from the
// in-progress list. A crash between the steps leaves it in the in-progress list, and it is taken
// again; its mark, written in the same atomic change as the job itself, makes that repeat an
// AlreadyExists even when the job has been run and acknowledged since (the job itself is then
// gone, the mark is not). Once the in-progress entry is removed nothing can take the job again, so
// the taker forgets the mark at once (Forget); `until` is the safety net for marks a crash left.
//
// A mark is any non-empty string naming the job in its source (the bridge: the Sidekiq jid).
// Marks are kept beside the jobs and survive restarts as they do (sqlite:, Redis); every node
// sharing a store sees the same marks. FLUSH deletes them with the jobs.
//
// Contract as store.h (calls take effect in order, callbacks on the loop, now or later; `durable`
// runs once the change survives a crash of the process). A degraded or unavailable store refuses
// every change with its Status.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "bulkhead/store/job_record.h"
#include "bulkhead/store/store_callbacks.h"
#include "bulkhead/util/clock.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

// A job to add (as Store::Push: state kQueued or kScheduled) and the mark that goes with it.
struct MarkedJob {
  JobRecord job;
  std::string mark;
};

class TakenMarks : public StoreCallbacks {
 public:
  // One Status per job, in the order given.
  using PushedCallback = std::function<void(std::vector<Status>)>;

  virtual ~TakenMarks() = default;

  // Adds each job with its mark, kept until `until`, in one atomic change for all of them. A job
  // is refused with AlreadyExists, and changes nothing, when its jid is known, when its mark is
  // held unexpired at `now`, or when an earlier job of the same call has its jid or mark. Any other
  // failure (degraded, unavailable) is every job's Status, and nothing is added.
  virtual void PushMarked(std::vector<MarkedJob> jobs, TimePoint until, TimePoint now,
                          PushedCallback durable) = 0;
  // Deletes these marks (unknown ones are no error).
  virtual void Forget(std::vector<std::string> marks, Done durable) = 0;
  // Deletes up to `limit` marks whose `until` is at or before `now`; `cb` gets how many.
  virtual void Expire(TimePoint now, size_t limit, CountCallback cb) = 0;
  // How many marks are held (expired ones not yet deleted included). A read.
  virtual void Count(CountCallback cb) = 0;
};

}  // namespace bulkhead
