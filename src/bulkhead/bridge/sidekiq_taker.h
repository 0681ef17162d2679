// SidekiqTaker: takes jobs from Sidekiq queues in the application's Redis into bulkhead's store,
// reliably (docs/deliveries.md "From Sidekiq"; docs/architecture.md "The Sidekiq bridge"):
//   1. a job moves atomically from queue:NAME into this node's in-progress list
//      (sidekiq_scripts.h): many at once while there is a backlog (take.lua, up to `batch` jobs
//      and `batch_bytes` per call, up to `max_batches_in_flight` batches in flight); when the
//      queues are empty, a BRPOPLPUSH per queue on a connection of its own waits for the next
//      job, which moves it straight into the list;
//   2. it is mapped (sidekiq_job_mapping.h), checked as PUSH checks a job (ParseJobDocument, and
//      the delivery types' own checks in Engine::PushTaken) and stored with its jid as its mark,
//      in one atomic change (store/taken_marks.h), the whole batch in one store call;
//   3. only then it leaves the list (settle.lua), or, refused, moves from the list to Sidekiq's
//      dead set with the reason (sidekiq_dead_entry.h), and its mark is forgotten.
// A job left in the list (a crash, a lost reply) is taken again: by this node when it reads its
// list again (Resync: at start, after a lost reply), or by another node once this one is presumed
// dead (its alive key gone: BridgeLiveness, reap.lua, TakeBack). The store recognises a repeat by
// the job's jid or its mark (AlreadyExists, counted in `repeats`) even once the job has been run
// and acknowledged; the repeat then just leaves the list. A job the store refuses for now (it is
// unavailable) stays in the list and is offered again after a pause.
//
// Loop thread only. Callbacks that arrive after destruction are dropped.
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "bulkhead/bridge/bridge_snapshot.h"
#include "bulkhead/bridge/sidekiq_job_mapping.h"
#include "bulkhead/bridge/sidekiq_time.h"
#include "bulkhead/engine/engine.h"
#include "bulkhead/redis/redis_client.h"
#include "bulkhead/util/clock.h"
#include "bulkhead/util/timer.h"

namespace bulkhead {

struct TakerOptions {
  std::vector<std::string> queues;  // in priority order
  std::string node;                 // this node's name (its list: TakingKey(node))
  size_t batch = 1000;
  size_t batch_bytes = 8 << 20;  // a take stops once it holds this much (at least one job)
  size_t max_batches_in_flight = 4;
  int block_seconds = 1;  // each BRPOPLPUSH's timeout
  Duration mark_ttl = std::chrono::hours(24);
  SidekiqMappingLimits limits;
  SidekiqTimeFormat format = SidekiqTimeFormat::kFloatSeconds;
  int64_t dead_timeout_seconds = 180 * 24 * 3600;  // Sidekiq's dead_timeout_in_seconds
  int64_t dead_max_jobs = 10000;                   // Sidekiq's dead_max_jobs
  Duration pause = std::chrono::seconds(1);        // before offering refused-for-now jobs again
};

class SidekiqTaker {
 public:
  // `commands` runs the scripts; `blocking` holds one client per queue (same order), used for
  // nothing but its BRPOPLPUSH. All outlive the taker.
  SidekiqTaker(boost::asio::io_context& io, const Clock& clock, Engine& engine,
               RedisClient& commands, std::vector<RedisClient*> blocking, TakerOptions options,
               BridgeCounters& counters);
  ~SidekiqTaker();
  SidekiqTaker(const SidekiqTaker&) = delete;
  SidekiqTaker& operator=(const SidekiqTaker&) = delete;

  // May take (the application's Redis answers and this node holds its name), or may not.
  void Resume();
  void Pause();
  // This node's list may hold jobs this process does not hold (a lost reply, a lapsed heartbeat,
  // the start): it is read again once no call that moves jobs into it is in flight.
  void Resync();
  // Jobs a reap moved into this node's list: taken as any.
  void TakeBack(std::vector<std::string> jobs);
  // A client's state changed: takes up where it stopped.
  void Poke() { Pump(); }
  // Jobs of the list this process holds: taken, not settled yet.
  size_t held() const { return held_count_; }

 private:
  struct Batch;
  void Pump();
  void SendTake();
  void WaitForJobs();
  void OnWaited(size_t queue, Result<RedisReply> reply);
  void ReadList();
  // Holds `jobs` (now in the list) and processes them.
  void Hold(std::vector<std::string> jobs);
  void Process(std::vector<std::string> jobs);
  void Stored(const std::shared_ptr<Batch>& batch, std::vector<Status> results);
  void Settle(std::shared_ptr<Batch> batch);
  void Settled(const std::shared_ptr<Batch>& batch, const RedisReply& reply);
  void Release(const std::string& job);
  bool StoreWritable() const;
  // Takes again after `delay`, once (the store refused, a script failed).
  void RetryLater(std::vector<std::string> jobs);
  void WakeAfter(Duration delay);

  boost::asio::io_context& io_;
  const Clock& clock_;
  Engine& engine_;
  RedisClient& commands_;
  std::vector<RedisClient*> blocking_;
  const TakerOptions options_;
  const std::string list_;
  BridgeCounters& counters_;
  RetryDefault retry_for_;

  bool running_ = false;
  bool resync_needed_ = true;
  bool reading_list_ = false;
  bool take_in_flight_ = false;
  bool idle_ = false;  // the last take found nothing: waiting on the blocking connections
  size_t batches_in_flight_ = 0;
  std::vector<bool> waiting_;  // a BRPOPLPUSH is outstanding on blocking_[i]
  size_t waits_outstanding_ = 0;
  std::unordered_map<std::string, size_t> held_;  // job -> copies held
  size_t held_count_ = 0;
  std::vector<std::shared_ptr<Batch>> unsettled_;  // their settle failed: sent again
  std::vector<std::string> later_;  // held, refused by the store for now: offered again
  Timer wake_timer_;
  bool wake_armed_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace bulkhead
