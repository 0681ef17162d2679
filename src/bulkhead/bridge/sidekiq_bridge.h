// SidekiqBridge: bulkhead next to an application that runs Sidekiq on Redis (Mastodon). It takes
// the jobs the application pushes with Sidekiq::Client.push onto the configured Sidekiq queues
// into bulkhead's store (SidekiqTaker: reliable, batched, recognising repeats), and hands the
// delivery outcome jobs to the application's own Sidekiq as Sidekiq jobs (SidekiqOutcomeWriter).
// The contract for applications: docs/deliveries.md, "From Sidekiq"; running it:
// docs/operations.md, "The Sidekiq bridge"; the design: docs/architecture.md.
//
// Connections to the application's Redis (redis/redis_client.h: reconnect with backoff, Sentinel,
// READONLY, one log line per state change): one for the scripts and reads ("sidekiq redis"), and
// one per taken queue for its blocking BRPOPLPUSH. While the Redis cannot be reached the bridge is
// down: bulkhead keeps serving its own jobs (its /healthz stays 200 and says so), outcome jobs
// wait in its store, and taking resumes once the Redis is back. Node liveness and the reaper:
// BridgeLiveness.
//
// Figures: Snapshot() on the loop, and the latest published copy for readers on other threads
// (published(), refreshed every poll_every with the queues' sizes and latency).
//
// Loop thread only, except published().
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "bulkhead/bridge/bridge_liveness.h"
#include "bulkhead/bridge/bridge_snapshot.h"
#include "bulkhead/bridge/sidekiq_outcome_writer.h"
#include "bulkhead/bridge/sidekiq_taker.h"
#include "bulkhead/config/config.h"
#include "bulkhead/engine/engine.h"
#include "bulkhead/redis/redis_client.h"
#include "bulkhead/redis/redis_url.h"
#include "bulkhead/util/published.h"
#include "bulkhead/util/timer.h"

namespace bulkhead {

struct SidekiqBridgeOptions {
  RedisUrl url;
  std::string ca_file;
  TakerOptions taker;                 // queues, node, batch, mapping limits, dead set
  SidekiqOutcomeJobOptions outcomes;  // queue, classes, timestamp form
  LivenessOptions liveness;           // node, token, heartbeat, reaper
  std::chrono::milliseconds poll_every{1000};
};

// The options the [sidekiq] settings give (config.h), for a store that is `shared` (or not) and
// whose node id is `store_node` (the node name when sidekiq.node is empty on a shared store; an
// embedded store's node is the host name). InvalidArgument names the setting at fault.
Result<SidekiqBridgeOptions> SidekiqBridgeOptionsFrom(const Config& config, bool shared,
                                                      const std::string& store_node);

class SidekiqBridge {
 public:
  SidekiqBridge(boost::asio::io_context& io, const Clock& clock, Engine& engine,
                SidekiqBridgeOptions options);
  ~SidekiqBridge();
  SidekiqBridge(const SidekiqBridge&) = delete;
  SidekiqBridge& operator=(const SidekiqBridge&) = delete;

  // Connects (in the background: an unreachable Redis is retried) and starts taking and writing.
  void Start();
  // A graceful stop: stops taking and writing; deletes this node's alive key (waiting for the
  // answer at most `wait`, running the loop); closes the connections. Jobs not settled stay in
  // this node's list, taken again later (by this node's next start, or by another node).
  void Stop(std::chrono::milliseconds wait = std::chrono::milliseconds(2000));

  bool up() const;
  // Why the bridge is down ("" while up).
  std::string down_reason() const;
  BridgeSnapshot Snapshot() const;
  // Publishes Snapshot() now (the bridge also does every poll_every): before a /metrics scrape.
  void Publish() { published_.Publish(Snapshot()); }
  const Published<BridgeSnapshot>& published() const { return published_; }

 private:
  void OnCommandsState(RedisClientState state);
  void OnName(bool held);
  void Poll();
  void SchedulePoll();
  // Deletes the marks a crash left once their TTL passed (store/taken_marks.h), every
  // kExpireEvery.
  void ScheduleExpiry();

  boost::asio::io_context& io_;
  const Clock& clock_;
  Engine& engine_;
  const SidekiqBridgeOptions options_;
  BridgeCounters counters_;
  std::unique_ptr<RedisClient> commands_;
  std::vector<std::unique_ptr<RedisClient>> blocking_;
  std::unique_ptr<SidekiqTaker> taker_;
  std::unique_ptr<SidekiqOutcomeWriter> writer_;
  std::unique_ptr<BridgeLiveness> liveness_;
  Timer poll_timer_;
  Timer expiry_timer_;
  bool polling_ = false;
  bool stopped_ = false;
  std::vector<SidekiqQueueFigures> queues_;
  TimePoint polled_at_{};
  int64_t list_length_ = -1;  // this node's list at the last poll; -1: not read yet
  Published<BridgeSnapshot> published_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace bulkhead
