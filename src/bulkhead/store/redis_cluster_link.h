// RedisClusterLink: the ClusterLink of the Redis store, shared by every node on its namespace.
// - Messages: the store's subscription hands it what arrives on {NS}:wake ("NODE N QUEUE", after
//   a change that made jobs available), {NS}:hosts ("NODE HOST", RedisHostStates) and
//   {NS}:signals ("NODE STATE WID", PublishWorkerSignal); it runs the handlers for the other
//   nodes' messages.
// - Rosters: the roster goes to {NS}:roster:NODE with each heartbeat (and one at once when a
//   source is set on an open store), expiring with the alive key; a reap or a graceful stop
//   deletes it (redis_scripts/README.md, "Worker rosters").
// - Leases: {NS}:lease:NAME holds the node id (redis_scripts/lease.lua).
// - Live nodes: the count the last heartbeat (or Open's) answered (redis_store_liveness.cc); the
//   handler runs when a heartbeat finds it changed.
#pragma once

#include <functional>
#include <string>

#include "bulkhead/store/cluster_link.h"
#include "bulkhead/store/redis_calls.h"

namespace bulkhead {

class RedisClusterLink final : public ClusterLink {
 public:
  // `roster_source_set` runs when a source is set (the store then sends a heartbeat, when open).
  RedisClusterLink(RedisCalls& calls, std::function<void()> roster_source_set)
      : calls_(calls), roster_source_set_(std::move(roster_source_set)) {}

  bool shared() const override { return true; }
  void SetWakeHandler(WakeHandler handler) override { wake_handler_ = std::move(handler); }
  void SetHostStateHandler(HostStateHandler handler) override {
    host_state_handler_ = std::move(handler);
  }
  void SetWorkerSignalHandler(WorkerSignalHandler handler) override {
    worker_signal_handler_ = std::move(handler);
  }
  void PublishWorkerSignal(const std::string& wid, const std::string& state) override;
  void SetRosterSource(RosterSource source) override;
  void ListOtherRosters(RostersCallback cb) override;
  std::string node_id() const override { return calls_.node(); }
  void TryLease(const std::string& name, Duration ttl,
                std::function<void(Result<bool>)> cb) override;
  void ReleaseLease(const std::string& name) override;
  size_t live_nodes() const override { return live_nodes_; }
  void SetNodeCountHandler(NodeCountHandler handler) override {
    node_count_handler_ = std::move(handler);
  }

  // The store's side. A message of the subscription, on `channel`.
  void OnMessage(const std::string& channel, const std::string& message);
  // The source a heartbeat writes the roster of (null: none).
  const RosterSource& roster_source() const { return roster_source_; }
  // The live node count a heartbeat answered: logged, and the handler run, when it changed.
  void NoteLiveNodes(size_t live);

 private:
  void OnWakeMessage(const std::string& message);
  void OnHostsMessage(const std::string& message);
  void OnSignalsMessage(const std::string& message);
  // Whether `message` ("NODE ...") came from this node.
  bool FromHere(const std::string& message, size_t node_end) const;

  RedisCalls& calls_;
  std::function<void()> roster_source_set_;
  WakeHandler wake_handler_;
  HostStateHandler host_state_handler_;
  WorkerSignalHandler worker_signal_handler_;
  RosterSource roster_source_;
  size_t live_nodes_ = 1;
  NodeCountHandler node_count_handler_;
};

}  // namespace bulkhead
