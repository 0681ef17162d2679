// Change: one row-level mutation of the durable store, produced by MemoryState for every state
// transition and applied by a ChangeLog (SqliteChangeLog) in the same order.
#pragma once

#include <cstdint>
#include <string>

#include "bulkhead/store/host_state_record.h"
#include "bulkhead/store/job_record.h"

namespace bulkhead {

struct Change {
  enum class Kind : uint8_t {
    kInsertJob,         // a new row: id, job (all fields)
    kUpdateJob,         // the row's state, queue, score, enqueued_us and payload change
    kUpdateState,       // only state and score change (FETCH, cheap)
    kDeleteJob,         // id
    kAddCounter,        // name += delta
    kSetPaused,         // queue paused (flag) or resumed
    kDeleteAll,         // FLUSH: every job, counter and paused flag (not keys, not host states)
    kPutSigningKey,     // name = key id, value = PEM private key (insert or replace)
    kDeleteSigningKey,  // name = key id
    kPutHostState,      // host_state (insert or replace, keyed by host_state.host)
    kDeleteHostState,   // name = host
    kPutUniqueLock,     // name = lock key, value = holder jid, delta = expiry (µs)
    kDeleteUniqueLock,  // name = lock key
    kSetCronFiring,     // name = cron entry, delta = its last claimed due time (µs)
    // Records of Enterprise features (batches, tracking), one table for all: name = space,
    // key, value (kPutRecord: insert or replace). FLUSH (kDeleteAll) deletes them all.
    kPutRecord,
    kDeleteRecord,
  };
  explicit Change(Kind k) : kind(k) {}

  Kind kind;
  int64_t id = 0;
  JobRecord job;      // kInsertJob, kUpdateJob (kUpdateState uses state and score only)
  std::string name;   // kAddCounter: counter name; kSetPaused: queue; k*SigningKey: key id;
                      // kDeleteHostState: host; k*UniqueLock: key; kSetCronFiring: entry
  std::string value;  // kPutSigningKey: the PEM private key; kPutUniqueLock: holder jid;
                      // kPutRecord: the record
  std::string key;    // k*Record: the record's key within its space (name)
  HostStateRecord host_state;  // kPutHostState
  int64_t delta = 0;           // kAddCounter; kPutUniqueLock, kSetCronFiring: time (µs)
  bool flag = false;           // kSetPaused; kPutRecord: the record is stored nowhere before
                               // this put (not in the file, not put by an earlier change), so
                               // its delete makes both moot (false is always safe; not logged)
};

}  // namespace bulkhead
