#include "bulkhead/store/embedded_store.h"

#include "bulkhead/util/time_format.h"

namespace bulkhead {
namespace {

// When `writable` is an error: answers `cb` (if set) with it and returns true.
template <typename Callback>
bool Refused(const Status& writable, const Callback& cb) {
  if (writable.ok()) return false;
  if (cb) cb(writable);
  return true;
}

}  // namespace

EmbeddedStore::EmbeddedStore(std::string name, std::unique_ptr<ChangeLog> log)
    : name_(std::move(name)), log_(std::move(log)) {}

EmbeddedStore::~EmbeddedStore() { Close(); }

Status EmbeddedStore::Open() {
  if (!log_) return Status::Ok();
  return log_->Load(state_);
}

void EmbeddedStore::Close() {
  if (closed_) return;
  closed_ = true;
  if (log_) log_->Close();
}

bool EmbeddedStore::degraded() const { return log_ && !log_->failure().ok(); }

std::string EmbeddedStore::degraded_reason() const {
  if (!log_) return {};
  Status failure = log_->failure();
  if (failure.ok()) return {};
  return "store degraded: " + failure.message() + "; restart bulkhead once the disk is fixed";
}

Status EmbeddedStore::Writable() const {
  if (!degraded()) return Status::Ok();
  return Status::Unavailable(degraded_reason());
}

void EmbeddedStore::Commit(std::vector<Change> changes, std::function<void(Status)> durable) {
  if (!log_ || changes.empty()) {
    if (durable) durable(Status::Ok());
    return;
  }
  log_->Append(std::move(changes), std::move(durable));
}

void EmbeddedStore::Push(JobRecord job, Done durable) {
  if (Refused(Writable(), durable)) return;
  std::vector<Change> changes;
  Status s = state_.Add(std::move(job), changes);
  if (!s.ok()) {
    durable(s);
    return;
  }
  Commit(std::move(changes), std::move(durable));
}

void EmbeddedStore::Fetch(const std::vector<std::string>& queues, TimePoint now, JobCallback cb) {
  FetchUnder(queues, nullptr, std::string(), now, std::move(cb));
}

void EmbeddedStore::FetchFor(const std::vector<std::string>& queues, const std::string& wid,
                             TimePoint now, JobCallback cb) {
  FetchUnder(queues, nullptr, wid, now, std::move(cb));
}

void EmbeddedStore::FetchThrottled(const std::vector<std::string>& queues,
                                   const ThrottledFetch& throttled, TimePoint now, JobCallback cb) {
  FetchUnder(queues, &throttled, throttled.wid, now, std::move(cb));
}

void EmbeddedStore::FetchUnder(const std::vector<std::string>& queues,
                               const ThrottledFetch* throttled, const std::string& holder,
                               TimePoint now, JobCallback cb) {
  if (Refused(Writable(), cb)) return;
  std::vector<Change> changes;
  auto job = state_.Fetch(queues, ToUnixMicros(now), changes, throttled);
  if (job) state_.tracks().SetState(job->jid, kTrackWorking, false, ToUnixMicros(now), changes);
  if (job && !holder.empty()) state_.SetHolder(job->jid, holder, changes);
  Commit(std::move(changes), nullptr);
  cb(std::move(job));
}

void EmbeddedStore::ThrottleUses(const std::vector<QueueThrottle>& throttles, TimePoint now,
                                 ThrottleUsesCallback cb) {
  cb(state_.ThrottleUses(throttles, ToUnixMicros(now)));
}

void EmbeddedStore::Ack(const std::string& jid, TimePoint now, JobCallback durable) {
  if (Refused(Writable(), durable)) return;
  std::vector<Change> changes;
  std::optional<JobRecord> job = state_.Ack(jid, changes);
  if (job) {
    job->payload.clear();  // callers need the bookkeeping, not the JSON
    state_.ReleaseUniqueOf(jid, changes);
    AddOutcome(1, 0, now, changes);
    state_.BatchJobEnded(jid, /*acked=*/true, ToUnixMicros(now), changes);
    state_.tracks().SetState(jid, kTrackSuccess, false, ToUnixMicros(now), changes);
  }
  Commit(std::move(changes),
         [job = std::move(job), durable = std::move(durable)](Status s) mutable {
           if (!s.ok()) {
             durable(s);
           } else {
             durable(std::move(job));
           }
         });
}

void EmbeddedStore::GetWorking(const std::string& jid, JobCallback cb) {
  cb(state_.GetWorking(jid));
}

void EmbeddedStore::ExtendReservation(const std::string& jid, TimePoint until, Done durable) {
  if (Refused(Writable(), durable)) return;
  std::vector<Change> changes;
  Status s = state_.ExtendReservation(jid, ToUnixMicros(until), changes);
  if (!s.ok()) {
    durable(s);
    return;
  }
  Commit(std::move(changes), std::move(durable));
}

void EmbeddedStore::Move(JobRecord job, TimePoint now, Done durable) {
  if (Refused(Writable(), durable)) return;
  std::vector<Change> changes;
  Status s = state_.Move(job, ToUnixMicros(now), changes);
  if (!s.ok()) {
    durable(s);
    return;
  }
  Commit(std::move(changes), std::move(durable));
}

void EmbeddedStore::FailReserved(const std::string& jid, TimePoint reserved_until,
                                 std::optional<JobRecord> next, bool count_failure, TimePoint now,
                                 Done durable) {
  if (Refused(Writable(), durable)) return;
  std::vector<Change> changes;
  Status s =
      state_.FailReserved(jid, ToUnixMicros(reserved_until), next, ToUnixMicros(now), changes);
  if (!s.ok()) {
    durable(s);
    return;
  }
  AddOutcome(1, count_failure ? 1 : 0, now, changes);
  state_.BatchJobEnded(jid, /*acked=*/false, ToUnixMicros(now), changes);
  bool died = next && next->state == JobState::kDead;
  state_.tracks().SetState(jid, died ? kTrackDead : kTrackFailed, false, ToUnixMicros(now),
                           changes);
  Commit(std::move(changes), std::move(durable));
}

void EmbeddedStore::Remove(const std::string& jid, Done durable) {
  if (Refused(Writable(), durable)) return;
  std::vector<Change> changes;
  state_.Remove(jid, changes);
  Commit(std::move(changes), std::move(durable));
}

void EmbeddedStore::EnqueueDue(JobState set, TimePoint now, size_t limit, JobsCallback cb) {
  if (Refused(Writable(), cb)) return;
  std::vector<Change> changes;
  auto moved = state_.EnqueueDue(set, ToUnixMicros(now), limit, changes);
  Commit(std::move(changes), nullptr);
  cb(std::move(moved));
}

void EmbeddedStore::ExpiredReservations(TimePoint now, size_t limit, JobsCallback cb) {
  cb(state_.ExpiredReservations(ToUnixMicros(now), limit));
}

void EmbeddedStore::PurgeDead(TimePoint now, size_t limit, CountCallback cb) {
  if (Refused(Writable(), cb)) return;
  std::vector<Change> changes;
  size_t n = state_.PurgeDead(ToUnixMicros(now), limit, changes);
  state_.PurgeExpiredUniqueLocks(ToUnixMicros(now), limit, changes);  // not counted: not jobs
  Commit(std::move(changes), nullptr);
  cb(n);
}

void EmbeddedStore::Mutate(MutateOp op, JobState set, const MutateFilter& filter, TimePoint now,
                           Duration dead_ttl, CountCallback durable) {
  if (Refused(Writable(), durable)) return;
  std::vector<Change> changes;
  size_t n = state_.Mutate(op, set, filter, ToUnixMicros(now),
                           std::chrono::duration_cast<std::chrono::microseconds>(dead_ttl).count(),
                           changes);
  Commit(std::move(changes), [n, durable = std::move(durable)](Status s) {
    if (!s.ok()) {
      durable(s);
    } else {
      durable(n);
    }
  });
}

void EmbeddedStore::SetPaused(const std::vector<std::string>& queues, bool paused, Done durable) {
  if (Refused(Writable(), durable)) return;
  std::vector<Change> changes;
  state_.SetPaused(queues, paused, changes);
  Commit(std::move(changes), std::move(durable));
}

void EmbeddedStore::RemoveQueues(const std::vector<std::string>& queues, Done durable) {
  if (Refused(Writable(), durable)) return;
  std::vector<Change> changes;
  state_.RemoveQueues(queues, changes);
  Commit(std::move(changes), std::move(durable));
}

void EmbeddedStore::CountOutcome(int64_t processed, int64_t failures, TimePoint now) {
  if (degraded()) return;  // refused like every change; there is no callback to tell
  std::vector<Change> changes;
  AddOutcome(processed, failures, now, changes);
  Commit(std::move(changes), nullptr);
}

void EmbeddedStore::AddOutcome(int64_t processed, int64_t failures, TimePoint now,
                               std::vector<Change>& changes) {
  // Every ACK and FAIL lands here: format the day once per day, not once per job.
  int64_t day_number = ToUnixMicros(now) / (86'400LL * 1'000'000);
  if (day_number != counted_day_number_) {
    counted_day_number_ = day_number;
    counted_day_ = FormatDate(now);
  }
  const std::string& day = counted_day_;
  if (processed != 0) {
    state_.AddCounter("processed", processed, changes);
    state_.AddCounter("processed:" + day, processed, changes);
  }
  if (failures != 0) {
    state_.AddCounter("failures", failures, changes);
    state_.AddCounter("failures:" + day, failures, changes);
  }
}

void EmbeddedStore::Flush(Done durable) {
  if (Refused(Writable(), durable)) return;
  std::vector<Change> changes;
  state_.DeleteAll(changes);
  Commit(std::move(changes), std::move(durable));
}

void EmbeddedStore::PutSigningKey(const std::string& key_id, const std::string& pem, Done durable) {
  if (Refused(Writable(), durable)) return;
  std::vector<Change> changes;
  state_.PutSigningKey(key_id, pem, changes);
  Commit(std::move(changes), std::move(durable));
}

void EmbeddedStore::RemoveSigningKey(const std::string& key_id, Done durable) {
  if (Refused(Writable(), durable)) return;
  std::vector<Change> changes;
  if (!state_.RemoveSigningKey(key_id, changes)) {
    durable(Status::NotFound("no signing key is registered for \"" + key_id + "\""));
    return;
  }
  Commit(std::move(changes), std::move(durable));
}

void EmbeddedStore::ListSigningKeys(SigningKeysCallback cb) {
  std::vector<StoredSigningKey> keys;
  keys.reserve(state_.signing_keys().size());
  for (const auto& [key_id, pem] : state_.signing_keys()) keys.push_back({key_id, pem});
  cb(std::move(keys));
}

void EmbeddedStore::PutHostState(const HostStateRecord& record, Done durable) {
  if (Refused(Writable(), durable)) return;
  std::vector<Change> changes;
  state_.PutHostState(record, changes);
  Commit(std::move(changes), std::move(durable));
}

void EmbeddedStore::RemoveHostState(const std::string& host, Done durable) {
  if (Refused(Writable(), durable)) return;
  std::vector<Change> changes;
  state_.RemoveHostState(host, changes);
  Commit(std::move(changes), std::move(durable));
}

void EmbeddedStore::ListHostStates(HostStatesCallback cb) {
  std::vector<HostStateRecord> records;
  records.reserve(state_.host_states().size());
  for (const auto& [host, record] : state_.host_states()) records.push_back(record);
  cb(std::move(records));
}

void EmbeddedStore::Stats(std::function<void(Result<StoreStats>)> cb) { cb(state_.Stats()); }

void EmbeddedStore::List(JobState set, size_t offset, size_t limit, JobsCallback cb) {
  cb(state_.List(set, offset, limit));
}

// --- Batches ---

void EmbeddedStore::Apply(const Done& durable,
                          const std::function<Status(std::vector<Change>&)>& change) {
  if (Refused(Writable(), durable)) return;
  std::vector<Change> changes;
  Status s = change(changes);
  if (!s.ok()) {
    durable(s);
    return;
  }
  Commit(std::move(changes), durable);
}

void EmbeddedStore::BatchNew(BatchRecord batch, TimePoint now, Done durable) {
  Apply(durable, [&](std::vector<Change>& out) {
    return state_.CreateBatch(std::move(batch), ToUnixMicros(now), out);
  });
}

void EmbeddedStore::BatchGet(const std::string& bid, TimePoint now, BatchCallback cb) {
  const BatchRecord* b = state_.FindBatch(bid, ToUnixMicros(now));
  cb(b ? std::optional<BatchRecord>(*b) : std::nullopt);
}

void EmbeddedStore::BatchCommit(const std::string& bid, TimePoint now, Done durable) {
  Apply(durable,
        [&](std::vector<Change>& out) { return state_.CommitBatch(bid, ToUnixMicros(now), out); });
}

void EmbeddedStore::PushBatchMember(JobRecord job, const std::string& bid, TimePoint now,
                                    Done durable) {
  Apply(durable, [&](std::vector<Change>& out) {
    return state_.AddBatchMember(std::move(job), bid, ToUnixMicros(now), out);
  });
}

void EmbeddedStore::ExpireBatches(TimePoint now, size_t limit, CountCallback cb) {
  if (Refused(Writable(), cb)) return;
  std::vector<Change> changes;
  size_t n = state_.ExpireBatches(ToUnixMicros(now), limit, changes);
  Commit(std::move(changes), nullptr);
  cb(n);
}

void EmbeddedStore::GetBatchCounts(std::function<void(Result<BatchCounts>)> cb) {
  cb(state_.batch_counts());
}

// --- Job tracking ---

void EmbeddedStore::TrackSet(TrackUpdate update, TimePoint now, Done durable) {
  Apply(durable, [&](std::vector<Change>& out) {
    state_.tracks().Set(update, ToUnixMicros(now), out);
    return Status::Ok();
  });
}

void EmbeddedStore::TrackPushed(const std::string& jid, TimePoint now, Done durable) {
  Apply(durable, [&](std::vector<Change>& out) {
    if (state_.HoldsUnreserved(jid)) {
      state_.tracks().SetState(jid, kTrackEnqueued, true, ToUnixMicros(now), out);
    }
    return Status::Ok();
  });
}

void EmbeddedStore::TrackGet(const std::string& jid, TimePoint now, TrackCallback cb) {
  const TrackRecord* r = state_.tracks().Find(jid, ToUnixMicros(now));
  cb(r ? std::optional<TrackRecord>(*r) : std::nullopt);
}

void EmbeddedStore::ExpireTracks(TimePoint now, size_t limit, CountCallback cb) {
  if (Refused(Writable(), cb)) return;
  std::vector<Change> changes;
  size_t n = state_.tracks().Expire(ToUnixMicros(now), limit, changes);
  Commit(std::move(changes), nullptr);
  cb(n);
}

}  // namespace bulkhead
