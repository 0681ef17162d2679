#include "bulkhead/dispatch/held_jobs.h"

#include <algorithm>

namespace bulkhead {

bool HeldJobs::Add(DeliveryJob job, TimePoint reserved_until, Duration reserve_for) {
  auto it = jobs_.find(job.jid);
  if (it != jobs_.end()) {
    if (!it->second.in_flight) {
      renewals_.erase({it->second.renew_at, it->first});
      it->second.reserved_until = reserved_until;
      ScheduleRenewal(it->first, it->second);
    }
    return false;
  }
  const std::string jid = job.jid;
  const std::string host = job.host;
  deadlines_.insert({job.deadline, jid});
  HeldJob held;
  held.job = std::move(job);
  held.reserved_until = reserved_until;
  held.reserve_for = reserve_for;
  auto [pos, inserted] = jobs_.emplace(jid, std::move(held));
  ScheduleRenewal(jid, pos->second);
  fresh_[host].push_back(jid);
  return true;
}

HeldJob* HeldJobs::Find(const std::string& jid) {
  auto it = jobs_.find(jid);
  return it == jobs_.end() ? nullptr : &it->second;
}

std::vector<HostDemand> HeldJobs::FreshDemand() const {
  std::vector<HostDemand> demands;
  for (const auto& [host, queue] : fresh_) {
    if (!queue.empty()) demands.push_back({host, static_cast<int>(queue.size())});
  }
  return demands;
}

std::optional<std::string> HeldJobs::PopFresh(const std::string& host) {
  auto it = fresh_.find(host);
  if (it == fresh_.end() || it->second.empty()) return std::nullopt;
  std::string jid = std::move(it->second.front());
  it->second.pop_front();
  return jid;
}

std::map<std::string, std::deque<std::string>> HeldJobs::TakeFresh() {
  return std::exchange(fresh_, {});
}

void HeldJobs::MarkInFlight(HeldJob& held, Grant grant, TimePoint now) {
  LeaveSchedules(held.job.jid, held);
  held.in_flight = true;
  held.grant = std::move(grant);
  held.started = now;
}

HeldJob HeldJobs::Forget(const std::string& jid) {
  auto it = jobs_.find(jid);
  LeaveSchedules(jid, it->second);
  HeldJob held = std::move(it->second);
  jobs_.erase(it);
  return held;
}

std::optional<HeldJob> HeldJobs::TakeInFlight(const std::string& jid) {
  auto it = jobs_.find(jid);
  if (it == jobs_.end() || !it->second.in_flight) return std::nullopt;
  // In flight: no schedule entry to leave (invariant 2).
  HeldJob held = std::move(it->second);
  jobs_.erase(it);
  return held;
}

std::optional<HeldJobs::Expired> HeldJobs::PopExpired(TimePoint now) {
  while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
    std::string jid = deadlines_.begin()->second;
    deadlines_.erase(deadlines_.begin());
    auto it = jobs_.find(jid);
    if (it == jobs_.end() || it->second.in_flight) continue;
    Expired out;
    if (auto f = fresh_.find(it->second.job.host); f != fresh_.end()) {
      auto pos = std::find(f->second.begin(), f->second.end(), jid);
      if (pos != f->second.end()) {
        f->second.erase(pos);
        out.was_fresh = true;
      }
    }
    out.held = Forget(jid);
    return out;
  }
  return std::nullopt;
}

std::vector<HeldJobs::Renewal> HeldJobs::RenewDue(TimePoint now) {
  std::vector<Renewal> out;
  while (!renewals_.empty() && renewals_.begin()->first <= now) {
    std::string jid = renewals_.begin()->second;
    renewals_.erase(renewals_.begin());
    auto it = jobs_.find(jid);
    if (it == jobs_.end() || it->second.in_flight) continue;
    HeldJob& held = it->second;
    held.reserved_until = now + held.reserve_for;
    ScheduleRenewal(jid, held);
    out.push_back({std::move(jid), held.reserved_until});
  }
  return out;
}

std::optional<TimePoint> HeldJobs::NextDue() const {
  std::optional<TimePoint> next;
  if (!deadlines_.empty()) next = deadlines_.begin()->first;
  if (!renewals_.empty()) {
    TimePoint r = renewals_.begin()->first;
    if (!next || r < *next) next = r;
  }
  return next;
}

void HeldJobs::ScheduleRenewal(const std::string& jid, HeldJob& held) {
  held.renew_at = held.reserved_until - held.reserve_for / 2;
  renewals_.insert({held.renew_at, jid});
}

void HeldJobs::LeaveSchedules(const std::string& jid, const HeldJob& held) {
  deadlines_.erase({held.job.deadline, jid});
  renewals_.erase({held.renew_at, jid});
}

}  // namespace bulkhead
