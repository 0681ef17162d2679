// SharedHostStates: one breaker per destination host for all the nodes sharing a store (Redis).
//
// Each node keeps its own compartments (dispatch/dispatcher.h); on a shared store this makes
// their breakers act as one:
// - Opening and closing spread: a node that changes a host's state writes it (HostStateKeeper)
//   and the store tells the other nodes (ClusterLink::SetHostStateHandler, Redis pub/sub on
//   {NS}:hosts). Each reads the host's record back and adopts it (HostStateKeeper::Adopt): a
//   breaker opened on one node parks that host's jobs on every node as soon as the message
//   arrives (well within a second on a healthy Redis); a host found healthy by one node's probe
//   (its record removed) is closed on every node, which then start its parked jobs.
// - One half-open probe for the cluster: when a host's open interval ends, every node's breaker
//   goes half-open at the same time (they share its open-until). Before this node lets a probe
//   start, it takes the store's lease "probe:HOST" (ClusterLink::TryLease) for `probe_lease`
//   (longer than any attempt). Until the answer, and while another node holds the lease, the host's
//   probes are held here (Compartment::HoldProbes): the holder's result reaches this node as a
//   host state change (which lifts the hold), or the hold lapses with the lease and this node
//   tries to take it. The holder releases the lease once its breaker has left half-open.
//
// Not thread-safe: event loop thread only. Everything given to the constructor must outlive it.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "bulkhead/compartment/host_compartments.h"
#include "bulkhead/dispatch/host_state_keeper.h"
#include "bulkhead/store/store.h"
#include "bulkhead/util/clock.h"

namespace bulkhead {

class SharedHostStates {
 public:
  // `pump` is called (on a later turn of the loop) when something this class learnt may let
  // attempts start: an adopted state, a lease taken, a hold lifted.
  SharedHostStates(Store& store, HostCompartments& compartments, HostStateKeeper& keeper,
                   const Clock& clock, Duration probe_lease, std::function<void()> pump);
  ~SharedHostStates();
  SharedHostStates(const SharedHostStates&) = delete;
  SharedHostStates& operator=(const SharedHostStates&) = delete;

  // Listens to the store's host state changes.
  void Start();

  // Before scheduling: holds the probes of every half-open host whose lease this node does not
  // hold, and asks the store for the lease of those not yet asked.
  void GateProbes(TimePoint now);

  // After a result for `host`: releases this node's probe lease once its breaker left half-open.
  void AfterResult(const std::string& host, TimePoint now);

  // Hosts whose probe lease this node holds (tests).
  const std::set<std::string>& leased() const { return leased_; }

  static std::string LeaseName(const std::string& host) { return "probe:" + host; }

 private:
  void OnChanged(const std::string& host);
  void OnLease(const std::string& host, Result<bool> taken);

  Store& store_;
  HostCompartments& compartments_;
  HostStateKeeper& keeper_;
  const Clock& clock_;
  const Duration probe_lease_;
  const std::function<void()> pump_;
  std::set<std::string> leased_;   // this node holds their probe lease
  std::set<std::string> pending_;  // a TryLease answer is outstanding
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace bulkhead
