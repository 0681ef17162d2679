// EmbeddedStore: the in-process Store — state in memory (MemoryState), made durable by an optional
// ChangeLog. Without a log it is the `memory:` store (nothing survives a restart); with a
// SqliteChangeLog it is the default `sqlite:` store.
//
// Reads and state changes happen inline on the calling thread (the event loop), so a FETCH costs a
// hash lookup and a deque pop; only `durable` callbacks wait, for the log's group commit.
//
// Degraded mode (Store::degraded()). A change is applied to memory first and committed later, so
// a failed commit (disk full, I/O error) leaves memory ahead of the file. The store never goes on
// as if nothing happened:
// 1. The log reports the failure (ChangeLog::failure(), sticky) and writes nothing more; the
//    first failure is logged at error level with the database's message.
// 2. Every later call that changes state is refused with Unavailable("store degraded: ...")
//    before it touches memory (FETCH too: it reserves, so a degraded store hands out no job).
//    Reads keep working so that operators can look. Only a restart leaves degraded mode.
// 3. The changes of the failed batch itself, and of any batch appended before the failure was
//    seen, stay in memory but are not on disk: their `durable` callbacks get the error (the PUSH
//    or ACK is answered -ERR) and they are lost at restart, which reloads the file. A job whose
//    PUSH failed is therefore never run once the store is degraded. It can have been run only if
//    a FETCH took it in the few milliseconds its commit was in flight (FETCH does not wait for
//    the commit of what it hands out; see Store::Fetch).
// A store without a log (memory:) is never degraded.
#pragma once

#include <memory>
#include <string>

#include "bulkhead/store/change_log.h"
#include "bulkhead/store/embedded_batches.h"
#include "bulkhead/store/embedded_context.h"
#include "bulkhead/store/embedded_cron_claims.h"
#include "bulkhead/store/embedded_holders.h"
#include "bulkhead/store/embedded_host_states.h"
#include "bulkhead/store/embedded_signing_keys.h"
#include "bulkhead/store/embedded_taken_marks.h"
#include "bulkhead/store/embedded_throttles.h"
#include "bulkhead/store/embedded_tracks.h"
#include "bulkhead/store/embedded_unique_locks.h"
#include "bulkhead/store/memory_state.h"
#include "bulkhead/store/single_node_link.h"
#include "bulkhead/store/store.h"

namespace bulkhead {

class EmbeddedStore final : public Store {
 public:
  // `log` may be null (memory only).
  EmbeddedStore(std::string name, std::unique_ptr<ChangeLog> log);
  ~EmbeddedStore() override;

  std::string_view Name() const override { return name_; }
  bool degraded() const override;
  std::string degraded_reason() const override;
  Status Open() override;
  void Close() override;

  void Push(JobRecord job, Done durable) override;
  void Fetch(const std::vector<std::string>& queues, TimePoint now, JobCallback cb) override;
  void FetchFor(const std::vector<std::string>& queues, const std::string& wid, TimePoint now,
                JobCallback cb) override;
  void Ack(const std::string& jid, TimePoint now, JobCallback durable) override;
  void GetWorking(const std::string& jid, JobCallback cb) override;
  void ExtendReservation(const std::string& jid, TimePoint until, Done durable) override;
  void FailReserved(const std::string& jid, TimePoint reserved_until, std::optional<JobRecord> next,
                    bool count_failure, TimePoint now, Done durable) override;
  void Move(JobRecord job, TimePoint now, Done durable) override;
  void Remove(const std::string& jid, Done durable) override;
  void EnqueueDue(JobState set, TimePoint now, size_t limit, JobsCallback cb) override;
  void ExpiredReservations(TimePoint now, size_t limit, JobsCallback cb) override;
  void PurgeDead(TimePoint now, size_t limit, CountCallback cb) override;
  void Mutate(MutateOp op, JobState set, const MutateFilter& filter, TimePoint now,
              Duration dead_ttl, CountCallback durable) override;
  void SetPaused(const std::vector<std::string>& queues, bool paused, Done durable) override;
  void RemoveQueues(const std::vector<std::string>& queues, Done durable) override;
  void CountOutcome(int64_t processed, int64_t failures, TimePoint now) override;
  void Flush(Done durable) override;
  void Stats(std::function<void(Result<StoreStats>)> cb) override;
  void List(JobState set, size_t offset, size_t limit, JobsCallback cb) override;
  void FindJob(const std::string& jid, JobCallback cb) override;

  // The parts (embedded_<part>.h); one process owns the store: a cluster of one.
  ClusterLink& cluster() override { return cluster_; }
  UniqueLocks& unique_locks() override { return unique_locks_; }
  CronClaims& cron_claims() override { return cron_claims_; }
  BatchStore& batches() override { return batches_; }
  TrackStore& tracks() override { return tracks_; }
  ThrottleStore& throttles() override { return throttles_; }
  HolderStore& holders() override { return holders_; }
  SigningKeyStore& signing_keys() override { return signing_keys_; }
  HostStateStore& host_states() override { return host_states_; }
  TakenMarks& taken_marks() override { return taken_marks_; }
  StoreBackup* backup() override { return context_.log() ? context_.log()->backup() : nullptr; }

  // Queued jobs held cold (their payload only in the log; queue_slot.h). For tests and benches.
  size_t cold_jobs() const { return context_.cold_jobs(); }

 private:
  const std::string name_;
  // The state, its log and the steps of a change, shared with the parts.
  EmbeddedContext context_;
  MemoryState& state_ = context_.state();
  SingleNodeLink cluster_;
  EmbeddedUniqueLocks unique_locks_{context_};
  EmbeddedCronClaims cron_claims_{context_};
  EmbeddedBatches batches_{context_};
  EmbeddedTracks tracks_{context_};
  EmbeddedThrottles throttles_{context_};
  EmbeddedHolders holders_{context_};
  EmbeddedSigningKeys signing_keys_{context_};
  EmbeddedHostStates host_states_{context_};
  EmbeddedTakenMarks taken_marks_{context_};
};

}  // namespace bulkhead
