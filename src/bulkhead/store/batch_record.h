// BatchRecord: a Faktory Enterprise batch as the store keeps it (BATCH NEW/OPEN/COMMIT/STATUS;
// docs/batches.md). The store does the counting and fires the callbacks itself, in the same change
// as the ACK or FAIL that makes them due, so that each callback is pushed exactly once whatever
// the number of nodes and restarts.
//
// Counting, per member (a job that joined through custom.bid, or a child batch), once per member,
// never per attempt:
// - total: members that joined; pending: members not yet succeeded (ACKed; a child: its success
//   is done); failed: members whose last attempt FAILed and that have not succeeded since (a
//   failed member that later succeeds on retry leaves `failed`); executed: pending members that
//   ran at least once (a FAIL; a child: its complete is done).
// Callbacks (only once committed): complete fires when every member ran once (pending ==
// executed); success fires when pending == 0 and the complete callback (when there is one) has
// succeeded. A callback job carries custom._bid and custom._cb; its ACK sets its state to "2".
// A child batch tells its parent "ran" once its complete is done (its complete callback ACKed,
// or, without one, all its members ran) and "succeeded" once its success is done.
#pragma once

#include <cstdint>
#include <string>

#include "bulkhead/store/job_record.h"

namespace bulkhead {

// How long an uncommitted batch lives (Faktory: "The initial batch data has a TTL of 30
// minutes"), and how long a batch is kept after its success is done (bulkhead's choice; Faktory's
// is undocumented).
inline constexpr int64_t kBatchUncommittedTtlUs = 30LL * 60 * 1'000'000;
inline constexpr int64_t kBatchRetentionUs = 24LL * 3600 * 1'000'000;

struct BatchRecord {
  std::string bid;
  std::string parent_bid;  // empty: a top-level batch
  std::string description;
  int64_t created_us = 0;
  bool committed = false;
  // When the store deletes the batch (µs since the epoch); 0: never. Uncommitted: created + 30
  // min; succeeded: success time + kBatchRetentionUs; otherwise 0.
  int64_t expires_us = 0;
  int64_t total = 0;
  int64_t pending = 0;
  int64_t failed = 0;
  int64_t executed = 0;
  // Faktory's complete_st / success_st: "" not enqueued, "1" enqueued, "2" succeeded.
  std::string complete_st;
  std::string success_st;
  // The callback jobs (jid empty: none), ready to push: state kScheduled, payload with
  // custom._bid and custom._cb. Fired into the scheduled set due at once (score = the firing
  // time), so that the scheduler of whichever node runs it enqueues it.
  JobRecord complete;
  JobRecord success;
  // 0: nothing told to the parent; 1: "ran" told; 2: "succeeded" told (and counted).
  int told_parent = 0;
};

// Counters of batch life, kept in the store's counters (FLUSH resets them as processed/failures).
struct BatchCounts {
  int64_t created = 0;
  int64_t committed = 0;
  int64_t expired = 0;  // uncommitted for 30 minutes
  int64_t succeeded = 0;
};

// The store counter names of BatchCounts.
inline constexpr char kBatchCreatedCounter[] = "batch:created";
inline constexpr char kBatchCommittedCounter[] = "batch:committed";
inline constexpr char kBatchExpiredCounter[] = "batch:expired";
inline constexpr char kBatchSucceededCounter[] = "batch:succeeded";

}  // namespace bulkhead
