// ClusterSignals: the engine's side of its store's ClusterLink (store/cluster_link.h): what the
// other nodes sharing the store tell this one, and what this one tells them.
// - Jobs pushed or moved through other nodes wake this node's waiting FETCHes (`wake`).
// - Quiet/terminate: sent to every node, applied to the worker wherever it is connected.
// - Rosters: this node's workers, written with each heartbeat for the other nodes' views; the
//   workers of the whole cluster read back from theirs.
// On a store one process owns the link is a cluster of one (SingleNodeLink): nothing to hear or
// tell. Constructing one sets the link's handlers and roster source; destroying it clears them.
//
// Threading: the loop's. Answers that arrive after the ClusterSignals are gone are dropped.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "bulkhead/engine/published_roster.h"
#include "bulkhead/engine/worker_roster.h"
#include "bulkhead/store/cluster_link.h"
#include "bulkhead/util/alive_guard.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

class ClusterSignals {
 public:
  using WakeFn = std::function<void(const std::string& queue, size_t count)>;
  // `link` and `workers` must outlive this.
  ClusterSignals(ClusterLink& link, WorkerRoster& workers, WakeFn wake);
  ~ClusterSignals();
  ClusterSignals(const ClusterSignals&) = delete;
  ClusterSignals& operator=(const ClusterSignals&) = delete;

  // Quiet or terminate for the worker `wid`, or every worker (empty wid): applied here when the
  // worker is connected to this node, and sent to the other nodes sharing the store. NotFound when
  // `wid` is not connected here and no other node can have it (a store one process owns).
  Status SignalWorker(const std::string& wid, WorkerState state);
  // This node's workers (as they are now; node = the link's node_id()), then those the other
  // nodes published with their last heartbeat, by node and wid. A roster that does not read is
  // left out and logged.
  void ClusterWorkers(std::function<void(Result<std::vector<NodeWorker>>)> cb);

 private:
  // Applies a quiet/terminate to this node's worker `wid` (every one of them: empty wid); NotFound
  // when `wid` is not connected here.
  Status SignalHere(const std::string& wid, WorkerState state);

  ClusterLink& link_;
  WorkerRoster& workers_;
  WakeFn wake_;
  AliveGuard alive_;
};

}  // namespace bulkhead
