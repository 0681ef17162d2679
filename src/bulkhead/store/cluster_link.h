// ClusterLink: what only a store shared by several nodes (processes) does (Store::cluster()): tell
// this node what changed through the others (jobs, host states, worker signals), carry each
// node's worker roster, grant leases one node at a time, count the live nodes. A store one
// process owns provides SingleNodeLink (single_node_link.h): the answers of a cluster of one, so
// that callers never branch on the kind of store. Store's contract (store.h) holds for every call.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "bulkhead/util/clock.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

class ClusterLink {
 public:
  virtual ~ClusterLink() = default;

  // True when several nodes (processes) share this store (Redis): the working set then holds other
  // live nodes' reservations too, so a node must not take over the reservations it finds there at
  // start (the store gives back a dead node's reservations itself; see redis_store.h). False for
  // the embedded stores, which one process owns: what is in their working set at start was left
  // by this node's previous run.
  virtual bool shared() const = 0;

  // Jobs became available in a queue through another node sharing this store: (queue, how many).
  using WakeHandler = std::function<void(const std::string& queue, size_t count)>;
  // Sets (or, with null, clears) the handler. Only a store shared by several nodes calls it, on the
  // loop, for changes made through other nodes (this node's own are its caller's to know).
  virtual void SetWakeHandler(WakeHandler handler) = 0;

  // The delivery host state of `host` was written or removed through another node sharing this
  // store (HostStateStore Put, Remove). Set, cleared, called as the wake handler is.
  using HostStateHandler = std::function<void(const std::string& host)>;
  virtual void SetHostStateHandler(HostStateHandler handler) = 0;
  // Worker signals across nodes: a quiet or terminate ("quiet", "terminate") for the worker
  // `wid`, or for every worker (empty wid), sent through another node sharing this store with
  // PublishWorkerSignal. Set, cleared, called as the wake handler is. Like Faktory's own, a signal
  // is not stored: a node that does not hear it (its subscription down at that moment) does not
  // apply it.
  using WorkerSignalHandler = std::function<void(const std::string& wid, const std::string& state)>;
  virtual void SetWorkerSignalHandler(WorkerSignalHandler handler) = 0;
  // Sends a worker signal to the other nodes sharing this store; nothing on a store one process
  // owns (there is no other node). Fire and forget.
  virtual void PublishWorkerSignal(const std::string& wid, const std::string& state) = 0;
  // Worker rosters across nodes. A store shared by several nodes keeps each live node's
  // roster: the text `source` returns (the engine's EncodeRoster), written with every heartbeat of
  // this node and gone with it (a graceful stop, a reap, or its heartbeat's TTL). Null clears it.
  // A store one process owns keeps none (there is no other node to read it).
  using RosterSource = std::function<std::string()>;
  virtual void SetRosterSource(RosterSource source) = 0;
  struct NodeRoster {
    std::string node;
    std::string roster;  // as its source gave it
  };
  using RostersCallback = std::function<void(Result<std::vector<NodeRoster>>)>;
  // The rosters the other live nodes wrote last (each at most a heartbeat interval old), by node.
  // None on a store one process owns. A read.
  virtual void ListOtherRosters(RostersCallback cb) = 0;
  // This node's id among the nodes sharing the store; "" on a store one process owns.
  virtual std::string node_id() const = 0;
  // A lease only one node holds at a time, across the nodes sharing this store: `cb` gets true when
  // this node holds `name` now (taken, or renewed: it held it already) for `ttl`, false when
  // another node does. ReleaseLease ends this node's lease early (nothing if it holds none). A
  // store one process owns grants every lease (there is no other node); only a shared store
  // excludes.
  virtual void TryLease(const std::string& name, Duration ttl,
                        std::function<void(Result<bool>)> cb) = 0;
  virtual void ReleaseLease(const std::string& name) = 0;

  // --- Cluster membership (the delivery caps hold for the whole cluster) ---
  // How many live nodes share this store, this one included, as last learned (Redis: at Open and
  // at each heartbeat, the registered nodes whose alive key exists). At least 1; always 1 for a
  // store one process owns. Loop thread.
  virtual size_t live_nodes() const = 0;
  // Called on the loop with the new count each time live_nodes() changes. Set and cleared (null)
  // as the wake handler is; a store one process owns never calls it.
  using NodeCountHandler = std::function<void(size_t nodes)>;
  virtual void SetNodeCountHandler(NodeCountHandler handler) = 0;
};

}  // namespace bulkhead
