// DeferredClusterLink: a ClusterLink that answers later (deferred_store.h), over an inner store's.
// Tests derive from it to play a node of a cluster over a store one process owns (override what
// the test needs, e.g. shared() or live_nodes()).
#pragma once

#include "bulkhead/store/cluster_link.h"
#include "bulkhead/store/testing/deferred_later.h"

namespace bulkhead {

class DeferredClusterLink : public ClusterLink {
 public:
  DeferredClusterLink(ClusterLink& inner, Later later) : inner_(inner), later_(std::move(later)) {}
  bool shared() const override { return inner_.shared(); }
  void SetWakeHandler(WakeHandler handler) override { inner_.SetWakeHandler(std::move(handler)); }
  void SetHostStateHandler(HostStateHandler handler) override {
    inner_.SetHostStateHandler(std::move(handler));
  }
  void SetWorkerSignalHandler(WorkerSignalHandler handler) override {
    inner_.SetWorkerSignalHandler(std::move(handler));
  }
  void PublishWorkerSignal(const std::string& wid, const std::string& state) override {
    inner_.PublishWorkerSignal(wid, state);
  }
  void SetRosterSource(RosterSource source) override { inner_.SetRosterSource(std::move(source)); }
  void ListOtherRosters(RostersCallback cb) override {
    inner_.ListOtherRosters(later_(std::move(cb)));
  }
  std::string node_id() const override { return inner_.node_id(); }
  void TryLease(const std::string& name, Duration ttl,
                std::function<void(Result<bool>)> cb) override {
    inner_.TryLease(name, ttl, later_(std::move(cb)));
  }
  void ReleaseLease(const std::string& name) override { inner_.ReleaseLease(name); }
  size_t live_nodes() const override { return inner_.live_nodes(); }
  void SetNodeCountHandler(NodeCountHandler handler) override {
    inner_.SetNodeCountHandler(std::move(handler));
  }

 private:
  ClusterLink& inner_;
  Later later_;
};

}  // namespace bulkhead
