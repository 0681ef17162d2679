// CronScheduler: pushes the jobs of the configured [[cron]] entries (config.h CronEntry) when they
// are due, UTC, through the engine's PUSH (so unique and expiring options apply as to any job).
//
// Exactly once per due time, across restarts and across nodes sharing a store: before pushing, the
// scheduler claims (entry, due time) in the store (CronClaims::Claim, an atomic
// compare-and-set of the entry's last claimed due time, durable); only the node whose claim wins
// pushes, with a fresh jid. Catch-up: a due time is fired only while it is less than a minute old
// (kCatchUp): every due time of the last minute after the entry's last claimed one fires, in
// order (a late tick, a restart within a minute), each once; due times missed for longer
// (downtime) are skipped. An entry never fired before starts with its latest due time.
// A claim that fails (the store cannot be reached) is tried again at the next look, starting from
// the earliest due time whose claim failed, while it is within kCatchUp.
// A claim whose PUSH then fails (NOTUNIQUE, a store error) is logged and counted lost; a crash
// between the claim and the PUSH loses that firing too (at-most-once per due time).
//
// Threading: the io_context's thread; times come from the injected clock. Callbacks arriving after
// the scheduler is destroyed are dropped.
#pragma once

#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "bulkhead/config/config.h"
#include "bulkhead/engine/engine_snapshot.h"
#include "bulkhead/store/store.h"
#include "bulkhead/util/alive_guard.h"
#include "bulkhead/util/clock.h"
#include "bulkhead/util/rng.h"
#include "bulkhead/util/timer.h"

namespace bulkhead {

class CronScheduler {
 public:
  // How old a due time may be and still fire.
  static constexpr Duration kCatchUp = std::chrono::minutes(1);
  // How often the scheduler looks (due times are whole minutes or @every multiples).
  static constexpr Duration kTick = std::chrono::seconds(1);

  using PushFn = std::function<void(JobRecord, std::function<void(Status)>)>;
  // `entries` are copied; `push` is the engine's PUSH.
  CronScheduler(boost::asio::io_context& io, const Clock& clock, Store& store,
                std::vector<CronEntry> entries, Rng& rng, PushFn push);
  ~CronScheduler();
  CronScheduler(const CronScheduler&) = delete;
  CronScheduler& operator=(const CronScheduler&) = delete;

  // Reads the last claimed firings from the store, then looks now and every kTick.
  void Start();
  void Stop();
  // Looks now: claims and pushes each entry's latest due time if it is new and recent.
  void RunOnce();

  std::vector<CronEntrySnapshot> Snapshot(TimePoint now) const;

 private:
  struct Entry {
    CronEntry config;
    std::optional<TimePoint> attempted;  // the latest due time this node claimed or tried to
    std::optional<TimePoint> last_run;   // the latest due time claimed by any node, as seen here
    int64_t enqueued = 0;
    int64_t lost = 0;
  };
  void Fire(size_t index, TimePoint due);
  void PushFiring(size_t index, TimePoint due);
  void Tick();

  const Clock& clock_;
  Store& store_;
  Rng& rng_;
  PushFn push_;
  std::vector<Entry> entries_;
  Timer timer_;
  bool stopped_ = false;
  AliveGuard alive_;  // answers after this is gone are dropped
};

}  // namespace bulkhead
