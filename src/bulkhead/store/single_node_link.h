// SingleNodeLink: the ClusterLink of a store one process owns (the embedded stores): a cluster of
// one. Not shared, no node id, no other node to wake, signal or read a roster from, every lease
// granted, one live node; handlers are never called. Tests derive from it to play a node of a
// cluster.
#pragma once

#include "bulkhead/store/cluster_link.h"

namespace bulkhead {

class SingleNodeLink : public ClusterLink {
 public:
  bool shared() const override { return false; }
  void SetWakeHandler(WakeHandler) override {}
  void SetHostStateHandler(HostStateHandler) override {}
  void SetWorkerSignalHandler(WorkerSignalHandler) override {}
  void PublishWorkerSignal(const std::string&, const std::string&) override {}
  void SetRosterSource(RosterSource) override {}
  void ListOtherRosters(RostersCallback cb) override { cb(std::vector<NodeRoster>()); }
  std::string node_id() const override { return ""; }
  void TryLease(const std::string&, Duration, std::function<void(Result<bool>)> cb) override {
    cb(true);
  }
  void ReleaseLease(const std::string&) override {}
  size_t live_nodes() const override { return 1; }
  void SetNodeCountHandler(NodeCountHandler) override {}
};

}  // namespace bulkhead
