// EngineSnapshot: the job server's figures at one moment — queues, sets, counters, periodic tasks,
// the worker count — as Engine::Snapshot produces them. A plain value: copied across threads
// freely, never holding a reference into the engine. Rendered only by view/ (INFO, /api/*, /metrics
// and `bulkhead stats`); a new figure is a field here, filled in Engine::Snapshot, shown by a
// renderer.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bulkhead/store/batch_record.h"
#include "bulkhead/util/clock.h"

namespace bulkhead {

struct QueueSnapshot {
  size_t size = 0;
  bool paused = false;
  // Seconds since enqueued_at of the job at the head, at the snapshot's `now`; 0 when empty.
  double latency_seconds = 0;
};

// One periodic task's figures (Faktory's names in INFO: cycles, the jobs it moved, its wall time).
struct TaskSnapshot {
  int64_t cycles = 0;
  int64_t jobs = 0;  // enqueued (the set scanners) or reaped (the reapers) or purged (Dead)
  std::chrono::nanoseconds wall{0};
};

struct EngineTaskSnapshots {
  TaskSnapshot scheduled;  // "Scheduled": jobs enqueued from the scheduled set
  TaskSnapshot retries;    // "Retries": jobs enqueued from the retry set
  TaskSnapshot dead;       // "Dead": dead jobs purged past their retention
  TaskSnapshot busy;       // "Busy": expired reservations reaped
  TaskSnapshot workers;    // "Workers": silent workers dropped
};

// One queue throttle ([throttles]) and its use at the snapshot's `now`.
struct ThrottleSnapshot {
  std::string queue;
  bool per_worker = false;  // `worker = N` (per wid) rather than `concurrency = N`
  int limit = 0;
  int timeout_seconds = 0;
  size_t in_use = 0;          // slots held in all
  size_t max_per_worker = 0;  // per-worker throttles: the most slots one wid holds
};

// Unique jobs: locks taken with a PUSH, and PUSHes refused NOTUNIQUE (this node's, since
// start; Faktory's statsd names them uniq.lock and uniq.denied).
struct UniqueJobCounts {
  int64_t taken = 0;
  int64_t denied = 0;
};

// One [[cron]] entry: its schedule, when it is next due, the latest due time claimed (by any
// node, as this node saw it), and this node's pushes since start (lost: claimed, PUSH refused).
struct CronEntrySnapshot {
  std::string name;
  std::string schedule;
  TimePoint next_run;
  std::optional<TimePoint> last_run;
  int64_t enqueued = 0;
  int64_t lost = 0;
};

struct EngineSnapshot {
  TimePoint now;         // the engine clock's time of the snapshot
  TimePoint started_at;  // when the engine was created
  std::string store;     // Store::Name(): "memory", "sqlite", ...
  bool store_degraded = false;

  std::map<std::string, QueueSnapshot> queues;  // every known queue, empty ones included
  size_t scheduled = 0;
  size_t retries = 0;
  size_t dead = 0;
  size_t working = 0;   // reserved jobs
  size_t enqueued = 0;  // sum of queue sizes
  int64_t processed = 0;
  int64_t failures = 0;
  uint64_t push_duplicates = 0;
  BatchCounts batches;  // batches created, committed, expired uncommitted, succeeded

  EngineTaskSnapshots tasks;

  // Queue throttles, ordered by queue; empty when none is configured.
  std::vector<ThrottleSnapshot> throttles;

  // Connected workers (the roster itself is the engine's WorkerRoster; /api/workers reads it).
  size_t worker_count = 0;

  // Unique and expiring jobs: this node's counts since start; expired jobs by queue.
  UniqueJobCounts unique;
  std::map<std::string, int64_t> jobs_expired;
  std::vector<CronEntrySnapshot> cron;  // in config order
};

}  // namespace bulkhead
