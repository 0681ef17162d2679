#include "bulkhead/dispatch/shared_host_states.h"

#include <spdlog/spdlog.h>

#include <vector>

namespace bulkhead {
namespace {

// A lease the store could not answer about: try again this much later.
constexpr Duration kLeaseRetry = std::chrono::seconds(1);

}  // namespace

SharedHostStates::SharedHostStates(Store& store, HostCompartments& compartments,
                                   HostStateKeeper& keeper, const Clock& clock,
                                   Duration probe_lease, std::function<void()> pump)
    : store_(store),
      compartments_(compartments),
      keeper_(keeper),
      clock_(clock),
      probe_lease_(probe_lease),
      pump_(std::move(pump)) {}

SharedHostStates::~SharedHostStates() {
  *alive_ = false;
  store_.cluster().SetHostStateHandler(nullptr);
}

void SharedHostStates::Start() {
  store_.cluster().SetHostStateHandler([this, alive = alive_](const std::string& host) {
    if (*alive) OnChanged(host);
  });
}

void SharedHostStates::OnChanged(const std::string& host) {
  store_.host_states().List([this, alive = alive_, host, seq = keeper_.write_seq(host)](
                                Result<std::vector<HostStateRecord>> records) {
    if (!*alive) return;
    // This node wrote the host after the read was sent: the store holds that write (or a later
    // node's, which is announced again), not what the read saw.
    if (keeper_.write_seq(host) != seq) return;
    if (!records.ok()) {
      spdlog::warn("delivery: cannot read the state of host {} another node changed: {}", host,
                   records.status().message());
      return;
    }
    std::optional<HostStateRecord> found;
    for (HostStateRecord& r : *records) {
      if (r.host == host) found = std::move(r);
    }
    const TimePoint now = clock_.Now();
    keeper_.Adopt(host, found, now);
    // The new state (opened again, or closed) is the probe's result: the hold ends with it.
    if (Compartment* c = compartments_.Find(host)) c->HoldProbes(std::nullopt);
    if (leased_.erase(host) > 0) store_.cluster().ReleaseLease(LeaseName(host));
    pump_();
  });
}

void SharedHostStates::GateProbes(TimePoint now) {
  for (const auto& [host, record] : keeper_.saved_hosts()) {
    Compartment* c = compartments_.Find(host);
    if (c == nullptr || leased_.contains(host)) continue;
    if (c->breaker().state(now) != BreakerState::kHalfOpen) continue;
    if (c->probe_hold_until() && now < *c->probe_hold_until()) continue;  // held or being asked
    c->HoldProbes(now + probe_lease_);
    if (!pending_.insert(host).second) continue;
    store_.cluster().TryLease(LeaseName(host), probe_lease_,
                              [this, alive = alive_, host = std::string(host)](Result<bool> taken) {
                                if (*alive) OnLease(host, std::move(taken));
                              });
  }
}

void SharedHostStates::OnLease(const std::string& host, Result<bool> taken) {
  pending_.erase(host);
  const TimePoint now = clock_.Now();
  Compartment* c = compartments_.Find(host);
  if (taken.ok() && *taken) {
    if (c == nullptr || c->breaker().state(now) != BreakerState::kHalfOpen) {
      store_.cluster().ReleaseLease(
          LeaseName(host));  // its state changed meanwhile: no probe to run
      return;
    }
    leased_.insert(host);
    c->HoldProbes(std::nullopt);
    pump_();
    return;
  }
  if (!taken.ok()) {
    spdlog::warn("delivery: cannot take the probe lease of host {}: {}", host,
                 taken.status().message());
    if (c != nullptr) c->HoldProbes(now + kLeaseRetry);
  }
  // Another node probes: the hold set by GateProbes stays until its result or the lease's end.
}

void SharedHostStates::AfterResult(const std::string& host, TimePoint now) {
  if (!leased_.contains(host)) return;
  const Compartment* c = compartments_.Find(host);
  if (c != nullptr && c->breaker().state(now) == BreakerState::kHalfOpen) return;
  leased_.erase(host);
  store_.cluster().ReleaseLease(LeaseName(host));
}

}  // namespace bulkhead
