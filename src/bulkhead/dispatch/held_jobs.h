// HeldJobs: the ledger of the delivery jobs the dispatcher holds in memory while it owns their
// store reservation: which are fresh (taken, not yet started or parked), which are in flight, when
// each one's reservation must be renewed, and when each one's deadline passes.
//
// Invariants:
//   1. every held job is in exactly one of: a fresh queue of its host, in flight, or parked (the
//      last one is recorded by its host's Compartment, not here);
//   2. a job not in flight has one deadline entry and one renewal entry; a job in flight has
//      neither (its attempt is bounded by the transport's deadlines instead);
//   3. renew_at = reserved_until - reserve_for / 2: a reservation is renewed once less than half
//      of it remains, so the store's reaper never fails a job that is merely waiting.
//
// Not thread-safe: owned by the dispatcher on the event loop. Pure bookkeeping: no I/O.
#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "bulkhead/compartment/host_compartments.h"
#include "bulkhead/dispatch/delivery_job.h"
#include "bulkhead/util/clock.h"

namespace bulkhead {

struct HeldJob {
  DeliveryJob job;
  bool in_flight = false;
  std::optional<Grant> grant;  // while in flight
  TimePoint started;           // of the attempt in flight
  TimePoint reserved_until;    // the store's reservation expiry
  Duration reserve_for{};      // the job's reservation length
  TimePoint renew_at;          // its renewal entry (while not in flight)
};

class HeldJobs {
 public:
  // A renewed reservation: the store must be told the new expiry.
  struct Renewal {
    std::string jid;
    TimePoint reserved_until;
  };
  // A job whose deadline passed while it waited, removed from the ledger.
  struct Expired {
    HeldJob held;
    bool was_fresh = false;  // false: it is parked in its host's compartment (unpark it)
  };

  HeldJobs() = default;
  HeldJobs(const HeldJobs&) = delete;
  HeldJobs& operator=(const HeldJobs&) = delete;

  // Holds a job just taken from the store as fresh for its host. When the jid is already held
  // (its reservation expired while held and the store handed it out again), keeps the held one
  // under the new reservation (unless in flight) and returns false.
  bool Add(DeliveryJob job, TimePoint reserved_until, Duration reserve_for);

  // Null when `jid` is not held.
  HeldJob* Find(const std::string& jid);

  // Hosts with fresh jobs and how many, for HostCompartments::Schedule.
  std::vector<HostDemand> FreshDemand() const;
  // The oldest fresh job of `host`, taken out of its fresh queue; nullopt when none.
  std::optional<std::string> PopFresh(const std::string& host);
  // Every remaining fresh job, by host; the fresh queues are left empty (the caller parks them).
  std::map<std::string, std::deque<std::string>> TakeFresh();

  // Starts the attempt of `held`, a job of this ledger (from Find) not in flight: it leaves the
  // deadline and renewal schedules.
  void MarkInFlight(HeldJob& held, Grant grant, TimePoint now);

  // Drops a held job (from the schedules too) and returns it. `jid` must be held and not fresh.
  HeldJob Forget(const std::string& jid);
  // Drops the job `jid` and returns it if it is held and in flight; nullopt (nothing changes)
  // otherwise.
  std::optional<HeldJob> TakeInFlight(const std::string& jid);

  // The next job not in flight whose deadline is at or before `now`, removed; nullopt when none.
  std::optional<Expired> PopExpired(TimePoint now);

  // Renews every reservation whose renewal time has come (jobs not in flight) to now +
  // reserve_for, and returns them for the store.
  std::vector<Renewal> RenewDue(TimePoint now);

  // The earliest deadline or renewal time; nullopt when nothing waits.
  std::optional<TimePoint> NextDue() const;

  size_t size() const { return jobs_.size(); }
  bool empty() const { return jobs_.empty(); }

 private:
  void ScheduleRenewal(const std::string& jid, HeldJob& held);
  void LeaveSchedules(const std::string& jid, const HeldJob& held);

  std::map<std::string, HeldJob> jobs_;                    // by jid
  std::map<std::string, std::deque<std::string>> fresh_;   // host → jids not yet parked/started
  std::set<std::pair<TimePoint, std::string>> deadlines_;  // of held jobs not in flight
  std::set<std::pair<TimePoint, std::string>> renewals_;   // renew-at of held jobs not in flight
};

}  // namespace bulkhead
