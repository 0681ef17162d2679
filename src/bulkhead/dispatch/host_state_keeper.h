// HostStateKeeper: keeps what the delivery engine knows about failing hosts across restarts, and
// announces when a host becomes unavailable or available again.
//
// While a host is failing, its compartment's CompartmentState (breaker open-until and openings,
// failing-since, Retry-After) and whether it was announced unavailable are kept in the store
// (HostStateStore::Put): written after a result only when they changed, deleted once the host is
// healthy and not announced (or its compartment was evicted and it was not announced). Restore
// reads them back into the HostCompartments at start, before any reservation is adopted, so a
// dead host's adopted jobs stay parked until its breaker's probe time and its unavailable period
// still counts from its first failure.
//
// ToHostStateRecord / ToCompartmentState are the one mapping between the stored row and the
// compartment's state.
//
// Not thread-safe: event loop thread only. The store, compartments, outcome jobs and clock must
// outlive it.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "bulkhead/compartment/host_compartments.h"
#include "bulkhead/dispatch/outcome_jobs.h"
#include "bulkhead/store/host_state_record.h"
#include "bulkhead/store/store.h"
#include "bulkhead/util/clock.h"

namespace bulkhead {

HostStateRecord ToHostStateRecord(const std::string& host, const CompartmentState& state,
                                  bool unavailable);
CompartmentState ToCompartmentState(const HostStateRecord& record);

class HostStateKeeper {
 public:
  HostStateKeeper(Store& store, HostCompartments& compartments, OutcomeJobs& outcomes,
                  const Clock& clock);
  ~HostStateKeeper();
  HostStateKeeper(const HostStateKeeper&) = delete;
  HostStateKeeper& operator=(const HostStateKeeper&) = delete;

  // Reads the saved host states, restores the failing ones into the compartments and remembers
  // which hosts were announced unavailable; then runs `done`, inside this call or on a later turn
  // of the loop, whichever way the store answers (never after the keeper is destroyed). A store
  // error is logged and restores nothing.
  void Restore(std::function<void()> done);

  // After a result for `host`: announces bulkhead.host_unavailable / bulkhead.host_available when
  // its verdict changed, then saves its state if it differs from what the store holds.
  void AfterResult(const std::string& host, TimePoint now);

  // Saves (in practice: deletes or keeps) the state of saved hosts whose compartments were
  // evicted.
  void SaveEvicted(TimePoint now);

  // Another node changed `host`'s stored state (a shared store): `record` is what the store holds
  // now (nullopt: removed, the host is healthy there). Restores it into the compartment, as if
  // this node had written it (nothing is written back, nothing announced: the other node did).
  void Adopt(const std::string& host, const std::optional<HostStateRecord>& record, TimePoint now);
  // Runs after every AfterResult (SharedHostStates ends its probe lease there).
  void SetAfterResultObserver(std::function<void(const std::string& host, TimePoint now)> fn) {
    after_result_ = std::move(fn);
  }
  // Increases with every write or removal of `host`'s state this keeper sends (0: none yet). A
  // read sent before a later write of this node is older than what the store holds.
  uint64_t write_seq(const std::string& host) const {
    auto it = write_seq_.find(host);
    return it == write_seq_.end() ? 0 : it->second;
  }
  // The hosts whose state the store holds: the failing ones.
  const std::map<std::string, HostStateRecord>& saved_hosts() const { return saved_hosts_; }

  // Whether `host` was announced unavailable (and not available since).
  bool announced_unavailable(const std::string& host) const {
    return unavailable_hosts_.contains(host);
  }
  // Hosts whose state the store holds (as far as this keeper wrote or read it).
  size_t saved_count() const { return saved_hosts_.size(); }

 private:
  void CheckAvailability(const std::string& host, TimePoint now);
  // Writes (or deletes) the stored state of `host` if it differs from what was written last.
  void Save(const std::string& host, TimePoint now);

  Store& store_;
  HostCompartments& compartments_;
  OutcomeJobs& outcomes_;
  const Clock& clock_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  std::set<std::string> unavailable_hosts_;             // announced with bulkhead.host_unavailable
  std::map<std::string, HostStateRecord> saved_hosts_;  // what the store holds, by host
  std::function<void(const std::string&, TimePoint)> after_result_;
  // By host: the sequence number of this keeper's last write (one entry per host ever written).
  std::map<std::string, uint64_t> write_seq_;
  uint64_t next_write_seq_ = 1;
};

}  // namespace bulkhead
