// SidekiqOutcomeWriter: hands outcome jobs to the application's Sidekiq. With the bridge on,
// OutcomeJobs (dispatch/outcome_jobs.h) pushes them into bulkhead's own store, in the internal
// queue kSidekiqOutcomesQueue (no client can name it, as ~deliveries), so that they wait there —
// durable, on every store — through any outage of the application's Redis. The writer reserves
// each with the engine's blocking FETCH (several at once), writes it as a Sidekiq job
// (sidekiq_outcome_job.h) to queue:NAME with push_outcomes.lua (SADD queues + LPUSH, one step, as
// Sidekiq::Client#atomic_push), and only then ACKs it.
//
// At least once. A write that fails (the Redis went away) gives the job back to its queue at once,
// no retry spent, and the writer waits until the Redis answers again. A crash (or a lost reply)
// between the write and the ACK writes the job again once its reservation expires (60 s, then the
// engine's retry delay; on a shared store a dead node's reservations come back at once with the
// store's reaper): the application's Sidekiq may then run that outcome twice, both with the same
// jid. Workers should be idempotent (docs/deliveries.md).
//
// Loop thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "bulkhead/bridge/bridge_snapshot.h"
#include "bulkhead/bridge/sidekiq_outcome_job.h"
#include "bulkhead/engine/engine.h"
#include "bulkhead/redis/redis_client.h"

namespace bulkhead {

// Outcome jobs waiting to be written to the application's Redis. Outside the queue-name alphabet.
inline constexpr char kSidekiqOutcomesQueue[] = "~sidekiq-outcomes";

class SidekiqOutcomeWriter {
 public:
  // `slots`: outcome jobs written at once.
  SidekiqOutcomeWriter(Engine& engine, RedisClient& commands, const Clock& clock,
                       SidekiqOutcomeJobOptions options, BridgeCounters& counters,
                       size_t slots = 8);
  ~SidekiqOutcomeWriter();
  SidekiqOutcomeWriter(const SidekiqOutcomeWriter&) = delete;
  SidekiqOutcomeWriter& operator=(const SidekiqOutcomeWriter&) = delete;

  // Writes while the Redis answers (Resume) or not (Pause: waiting FETCHes are withdrawn; a write
  // in flight finishes).
  void Resume();
  void Pause();

 private:
  void Fill();
  void Fetch();
  void Write(const std::string& job_json);
  void GiveBack(const std::string& jid);
  void SlotDone(bool again);

  Engine& engine_;
  RedisClient& commands_;
  const Clock& clock_;
  const SidekiqOutcomeJobOptions options_;
  BridgeCounters& counters_;
  const size_t slots_;
  size_t busy_ = 0;  // slots fetching or writing
  bool running_ = false;
  std::set<uint64_t> tickets_;  // FETCHes waiting
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace bulkhead
