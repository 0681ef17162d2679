// JobRecord: a job as the store keeps it — the client-visible JSON payload plus the few fields the
// server needs without parsing it again.
#pragma once

#include <cstdint>
#include <string>

namespace bulkhead {

// Where a job is. The numeric values are persisted (SQLite column `jobs.state`): never renumber.
enum class JobState : uint8_t {
  kQueued = 0,     // waiting in its queue; score = FIFO sequence number
  kScheduled = 1,  // score = time it becomes due (`at`)
  kRetry = 2,      // score = time of the next attempt (`failure.next_at`)
  kDead = 3,       // score = time it is purged (180 days after death)
  kWorking = 4,    // reserved by a worker; score = reservation expiry
};

const char* JobStateName(JobState s);

struct JobRecord {
  std::string jid;
  std::string queue;
  std::string jobtype;
  // The whole job as compact JSON, exactly what FETCH hands to a worker.
  std::string payload;
  JobState state = JobState::kQueued;
  // Meaning depends on state (see JobState); microseconds since the epoch for time scores.
  int64_t score = 0;
  // When the job last entered its queue (µs since epoch); 0 when never enqueued.
  int64_t enqueued_us = 0;
  // Reservation length for FETCH, seconds (already clamped to 60..86400).
  int32_t reserve_for_s = 1800;
  // Set by PUSH's checks when the job has no "custom" object: then none of the options kept
  // there (batch, unique, expiry, tracking) applies, and PUSH does not screen the payload for
  // them. False: not known (read the payload). Not stored.
  bool no_custom = false;
};

}  // namespace bulkhead
