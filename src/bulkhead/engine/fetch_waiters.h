// FetchWaiters: the FETCHes a node has not answered yet. Each waits up to its block time for a
// job of its queues; a waiter "probes" (asks its source for a job) when it starts and each time
// it is woken (a job became available in one of its queues). At most one probe per waiter is in
// flight: a waiter woken while probing probes again if its probe finds nothing, and one whose
// block time ran out while probing is answered with what the probe finds.
//
// Threading: the loop's; callbacks run on it, before a call returns or later (as the store
// answers: store.h). Answers that arrive after the FetchWaiters are gone are dropped.
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bulkhead/store/store.h"
#include "bulkhead/util/alive_guard.h"
#include "bulkhead/util/clock.h"
#include "bulkhead/util/timer.h"

namespace bulkhead {

// Where FetchWaiters' probes get their jobs (the engine).
class FetchSource {
 public:
  // Asks the store for a job of `queues` (in order) for worker `wid` (may be empty), reserving it.
  virtual void TakeJob(const std::vector<std::string>& queues, const std::string& wid,
                       Store::JobCallback cb) = 0;
  // A job was reserved for a waiting FETCH: true to hand it out; false when it was dropped
  // instead (expired): the waiter then probes again on a later turn of the loop.
  virtual bool AdmitJob(const JobRecord& job) = 0;
  // A job was reserved for a FETCH that is gone (cancelled, or answered meanwhile): put it back.
  virtual void ReturnJob(JobRecord job) = 0;

 protected:
  ~FetchSource() = default;
};

class FetchWaiters {
 public:
  // A job's JSON, or nullopt for "no job" ($-1).
  using FetchCallback = std::function<void(Result<std::optional<std::string>>)>;

  // `source` must outlive this.
  FetchWaiters(boost::asio::io_context& io, Clock& clock, FetchSource& source);

  // A FETCH of `queues` by `wid` that waits up to `block` for a job (no queues: it only waits).
  // Returns a ticket for Cancel while the fetch waits, or 0 when `cb` already ran.
  uint64_t Add(std::vector<std::string> queues, const std::string& wid,
               std::chrono::milliseconds block, FetchCallback cb);
  // Forgets a waiting fetch; its callback never runs. A job reserved for it after all goes back
  // (FetchSource::ReturnJob).
  void Cancel(uint64_t ticket);
  // Tries waiting fetches that include `queue`, oldest first, for up to `count` jobs.
  void Wake(const std::string& queue, size_t count);
  // Every queue a waiter lists (one entry per waiter that lists it).
  std::vector<std::string> Queues() const;
  // Answers every waiter with no job.
  void AnswerAll();

 private:
  // A FETCH not yet answered: waiting for a job (its block timer running), or probing (a store
  // Fetch for it is in flight).
  struct Waiter {
    uint64_t ticket;
    std::vector<std::string> queues;
    FetchCallback cb;
    TimePoint deadline;            // the end of its block time, from its arrival
    std::unique_ptr<Timer> timer;  // set once it waits (Arm); null while its first probe runs
    std::string wid;               // the worker's: its jobs' holder, and per-worker throttles
    bool probing = false;
    bool recheck = false;  // woken while probing: probe again if the probe finds nothing
    bool expired = false;  // its block time ran out while probing: answer the probe's outcome
  };
  using WaiterList = std::list<Waiter>;

  // Asks the source for a job for the waiter `ticket`; OnProbe handles the answer.
  void Probe(uint64_t ticket);
  void OnProbe(uint64_t ticket, Result<std::optional<JobRecord>> r);
  void OnBlockTimeout(uint64_t ticket);
  // Starts the waiter's block timer (to its deadline), unless it runs already. Not at arrival:
  // most FETCHes under load find a job at their first probe, and a timer set and cancelled costs
  // a turn of the loop for its cancelled handler.
  void Arm(Waiter& w);
  void Complete(WaiterList::iterator it, Result<std::optional<std::string>> result);

  boost::asio::io_context& io_;
  Clock& clock_;
  FetchSource& source_;
  WaiterList waiters_;
  std::map<uint64_t, WaiterList::iterator> index_;
  uint64_t next_ticket_ = 1;
  AliveGuard alive_;
};

}  // namespace bulkhead
