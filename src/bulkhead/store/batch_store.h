// BatchStore: the store's part for batches (Store::batches(); the rules are in
// store/batch_record.h). Store's contract (store.h) holds for every call.
//
// Besides these, Ack and FailReserved of a batch member or callback job count it in its batch
// and push the callbacks that became due, in the same change as the ACK or FAIL itself; so does
// Commit. A callback is pushed into the scheduled set due at `now`, exactly once.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "bulkhead/store/batch_record.h"
#include "bulkhead/store/job_record.h"
#include "bulkhead/store/store_callbacks.h"
#include "bulkhead/util/clock.h"

namespace bulkhead {

class BatchStore : public StoreCallbacks {
 public:
  virtual ~BatchStore() = default;

  using BatchCallback = std::function<void(Result<std::optional<BatchRecord>>)>;
  // Creates `batch` (bid, parent_bid, description, created_us and the callbacks set; the rest
  // is the store's), uncommitted, expiring kBatchUncommittedTtlUs after created_us; counts it
  // created. With parent_bid, the parent gains it as a member in the same change. NotFound "No
  // such batch <parent_bid>" when the parent is unknown; AlreadyExists when the bid is taken.
  virtual void New(BatchRecord batch, TimePoint now, Done durable) = 0;
  // The batch, or nullopt when unknown or expired at `now`.
  virtual void Get(const std::string& bid, TimePoint now, BatchCallback cb) = 0;
  // Commits the batch (counted once) and fires what is due. NotFound "No such batch <bid>".
  virtual void Commit(const std::string& bid, TimePoint now, Done durable) = 0;
  // Push(job), with the job joining batch `bid` (total and pending + 1) in the same change.
  // NotFound "No such batch <bid>" (and no job) when the batch is unknown or expired.
  virtual void PushMember(JobRecord job, const std::string& bid, TimePoint now, Done durable) = 0;
  // Deletes up to `limit` batches whose expiry passed (uncommitted ones are counted expired; a
  // child among them leaves its parent's counts); `cb` gets how many.
  virtual void Expire(TimePoint now, size_t limit, CountCallback cb) = 0;
  virtual void Counts(std::function<void(Result<BatchCounts>)> cb) = 0;
};

}  // namespace bulkhead
