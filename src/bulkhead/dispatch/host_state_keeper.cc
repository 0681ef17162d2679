#include "bulkhead/dispatch/host_state_keeper.h"

#include <spdlog/spdlog.h>

#include <vector>

#include "bulkhead/dispatch/log_done.h"
#include "bulkhead/util/time_format.h"

namespace bulkhead {
namespace {

int64_t ToStoredTime(const std::optional<TimePoint>& t) { return t ? ToUnixMicros(*t) : 0; }

std::optional<TimePoint> FromStoredTime(int64_t us) {
  if (us == 0) return std::nullopt;
  return FromUnixMicros(us);
}

}  // namespace

HostStateRecord ToHostStateRecord(const std::string& host, const CompartmentState& state,
                                  bool unavailable) {
  HostStateRecord r;
  r.host = host;
  r.breaker_open_until_us = ToStoredTime(state.breaker_open_until);
  r.breaker_series_openings = state.breaker_series_openings;
  r.breaker_openings = state.breaker_openings;
  r.failing_since_us = ToStoredTime(state.failing_since);
  r.unavailable = unavailable;
  r.retry_after_until_us = ToStoredTime(state.retry_after_until);
  return r;
}

CompartmentState ToCompartmentState(const HostStateRecord& r) {
  CompartmentState s;
  s.breaker_open_until = FromStoredTime(r.breaker_open_until_us);
  s.breaker_series_openings = r.breaker_series_openings;
  s.breaker_openings = r.breaker_openings;
  s.failing_since = FromStoredTime(r.failing_since_us);
  s.retry_after_until = FromStoredTime(r.retry_after_until_us);
  return s;
}

HostStateKeeper::HostStateKeeper(Store& store, HostCompartments& compartments,
                                 OutcomeJobs& outcomes, const Clock& clock)
    : store_(store), compartments_(compartments), outcomes_(outcomes), clock_(clock) {}

HostStateKeeper::~HostStateKeeper() { *alive_ = false; }

void HostStateKeeper::Restore(std::function<void()> done) {
  store_.host_states().List([this, alive = alive_,
                             done = std::move(done)](Result<std::vector<HostStateRecord>> records) {
    if (!*alive) return;
    if (!records.ok()) {
      spdlog::error("delivery: cannot read the saved host states: {}", records.status().message());
    } else {
      const TimePoint now = clock_.Now();
      for (auto& record : *records) {
        CompartmentState state = ToCompartmentState(record);
        if (!state.healthy()) compartments_.Restore(record.host, state, now);
        if (record.unavailable) unavailable_hosts_.insert(record.host);
        saved_hosts_.insert_or_assign(record.host, std::move(record));
      }
      if (!records->empty()) {
        spdlog::info("delivery: restored the state of {} failing hosts", records->size());
      }
    }
    done();
  });
}

void HostStateKeeper::AfterResult(const std::string& host, TimePoint now) {
  CheckAvailability(host, now);
  Save(host, now);
  if (after_result_) after_result_(host, now);
}

void HostStateKeeper::Adopt(const std::string& host, const std::optional<HostStateRecord>& record,
                            TimePoint now) {
  const CompartmentState state = record ? ToCompartmentState(*record) : CompartmentState{};
  if (record || compartments_.Find(host) != nullptr) compartments_.Restore(host, state, now);
  if (record) {
    if (record->unavailable) {
      unavailable_hosts_.insert(host);
    } else {
      unavailable_hosts_.erase(host);
    }
    saved_hosts_.insert_or_assign(host, *record);
  } else {
    unavailable_hosts_.erase(host);
    saved_hosts_.erase(host);
  }
}

void HostStateKeeper::CheckAvailability(const std::string& host, TimePoint now) {
  bool unavailable = compartments_.IsUnavailable(host, now);
  bool was = unavailable_hosts_.contains(host);
  if (unavailable && !was) {
    unavailable_hosts_.insert(host);
    spdlog::warn("delivery: host {} is unavailable (failing continuously)", host);
    const Compartment* c = compartments_.Find(host);
    outcomes_.HostUnavailable(host, c ? c->failing_since() : std::nullopt,
                              c ? c->last_error() : std::string());
  } else if (!unavailable && was) {
    unavailable_hosts_.erase(host);
    spdlog::info("delivery: host {} is available again", host);
    // The period that ended, as the store holds it (every node announcing its end agrees on it).
    std::optional<TimePoint> since;
    if (auto saved = saved_hosts_.find(host);
        saved != saved_hosts_.end() && saved->second.failing_since_us != 0) {
      since = FromUnixMicros(saved->second.failing_since_us);
    }
    outcomes_.HostAvailable(host, since);
  }
}

void HostStateKeeper::Save(const std::string& host, TimePoint now) {
  const Compartment* c = compartments_.Find(host);
  const CompartmentState state = c ? c->State(now) : CompartmentState{};
  const bool unavailable = unavailable_hosts_.contains(host);
  auto saved = saved_hosts_.find(host);
  if (state.healthy() && !unavailable) {
    if (saved == saved_hosts_.end()) return;
    saved_hosts_.erase(saved);
    write_seq_[host] = next_write_seq_++;
    store_.host_states().Remove(host, LogDone("host state removal", host));
    return;
  }
  HostStateRecord record = ToHostStateRecord(host, state, unavailable);
  if (saved != saved_hosts_.end() && saved->second == record) return;
  write_seq_[host] = next_write_seq_++;
  store_.host_states().Put(record, LogDone("host state write", host));
  saved_hosts_.insert_or_assign(host, std::move(record));
}

void HostStateKeeper::SaveEvicted(TimePoint now) {
  std::vector<std::string> evicted;
  for (const auto& [host, record] : saved_hosts_) {
    if (compartments_.Find(host) == nullptr) evicted.push_back(host);
  }
  for (const auto& host : evicted) Save(host, now);
}

}  // namespace bulkhead
