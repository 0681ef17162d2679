#include "bulkhead/store/embedded_store.h"

namespace bulkhead {

EmbeddedStore::EmbeddedStore(std::string name, std::unique_ptr<ChangeLog> log)
    : name_(std::move(name)), context_(std::move(log)) {}

EmbeddedStore::~EmbeddedStore() { Close(); }

Status EmbeddedStore::Open() { return context_.Load(); }

void EmbeddedStore::Close() { context_.Close(); }

bool EmbeddedStore::degraded() const { return context_.degraded(); }

std::string EmbeddedStore::degraded_reason() const { return context_.degraded_reason(); }

void EmbeddedStore::Push(JobRecord job, Done durable) {
  if (context_.Refused(durable)) return;
  std::vector<Change> changes;
  Status s = state_.Add(std::move(job), changes);
  if (!s.ok()) {
    durable(s);
    return;
  }
  context_.Commit(std::move(changes), std::move(durable));
}

void EmbeddedStore::Fetch(const std::vector<std::string>& queues, TimePoint now, JobCallback cb) {
  context_.Fetch(queues, nullptr, std::string(), now, std::move(cb));
}

void EmbeddedStore::FetchFor(const std::vector<std::string>& queues, const std::string& wid,
                             TimePoint now, JobCallback cb) {
  context_.Fetch(queues, nullptr, wid, now, std::move(cb));
}

void EmbeddedStore::Ack(const std::string& jid, TimePoint now, JobCallback durable) {
  if (context_.Refused(durable)) return;
  std::vector<Change> changes;
  changes.reserve(6);  // the row, its holder, two counters, a batch's and a track's: no regrowth
  std::optional<JobRecord> job = state_.Ack(jid, changes);
  if (job) {
    job->payload.clear();  // callers need the bookkeeping, not the JSON
    state_.ReleaseUniqueOf(jid, changes);
    context_.AddOutcome(1, 0, now, changes);
    state_.BatchJobEnded(jid, /*acked=*/true, ToUnixMicros(now), changes);
    state_.tracks().SetState(jid, kTrackSuccess, false, ToUnixMicros(now), changes);
  }
  context_.Commit(std::move(changes),
                  [job = std::move(job), durable = std::move(durable)](Status s) mutable {
                    if (!s.ok()) {
                      durable(s);
                    } else {
                      durable(std::move(job));
                    }
                  });
}

void EmbeddedStore::GetWorking(const std::string& jid, JobCallback cb) {
  context_.AfterLoads([this, jid, cb = std::move(cb)] { cb(state_.GetWorking(jid)); });
}

void EmbeddedStore::ExtendReservation(const std::string& jid, TimePoint until, Done durable) {
  if (context_.Refused(durable)) return;
  std::vector<Change> changes;
  Status s = state_.ExtendReservation(jid, ToUnixMicros(until), changes);
  if (!s.ok()) {
    durable(s);
    return;
  }
  context_.Commit(std::move(changes), std::move(durable));
}

void EmbeddedStore::Move(JobRecord job, TimePoint now, Done durable) {
  if (context_.Refused(durable)) return;
  std::vector<Change> changes;
  Status s = state_.Move(job, ToUnixMicros(now), changes);
  if (!s.ok()) {
    durable(s);
    return;
  }
  context_.Commit(std::move(changes), std::move(durable));
}

void EmbeddedStore::FailReserved(const std::string& jid, TimePoint reserved_until,
                                 std::optional<JobRecord> next, bool count_failure, TimePoint now,
                                 Done durable) {
  if (context_.Refused(durable)) return;
  std::vector<Change> changes;
  Status s =
      state_.FailReserved(jid, ToUnixMicros(reserved_until), next, ToUnixMicros(now), changes);
  if (!s.ok()) {
    durable(s);
    return;
  }
  context_.AddOutcome(1, count_failure ? 1 : 0, now, changes);
  state_.BatchJobEnded(jid, /*acked=*/false, ToUnixMicros(now), changes);
  bool died = next && next->state == JobState::kDead;
  state_.tracks().SetState(jid, died ? kTrackDead : kTrackFailed, false, ToUnixMicros(now),
                           changes);
  context_.Commit(std::move(changes), std::move(durable));
}

void EmbeddedStore::Remove(const std::string& jid, Done durable) {
  if (context_.Refused(durable)) return;
  std::vector<Change> changes;
  state_.Remove(jid, changes);
  context_.Commit(std::move(changes), std::move(durable));
}

void EmbeddedStore::EnqueueDue(JobState set, TimePoint now, size_t limit, JobsCallback cb) {
  if (context_.Refused(cb)) return;
  std::vector<Change> changes;
  auto moved = state_.EnqueueDue(set, ToUnixMicros(now), limit, changes);
  context_.Commit(std::move(changes), nullptr);
  cb(std::move(moved));
}

void EmbeddedStore::ExpiredReservations(TimePoint now, size_t limit, JobsCallback cb) {
  context_.AfterLoads([this, now, limit, cb = std::move(cb)] {
    cb(state_.ExpiredReservations(ToUnixMicros(now), limit));
  });
}

void EmbeddedStore::PurgeDead(TimePoint now, size_t limit, CountCallback cb) {
  if (context_.Refused(cb)) return;
  std::vector<Change> changes;
  size_t n = state_.PurgeDead(ToUnixMicros(now), limit, changes);
  state_.PurgeExpiredUniqueLocks(ToUnixMicros(now), limit, changes);  // not counted: not jobs
  context_.Commit(std::move(changes), nullptr);
  cb(n);
}

void EmbeddedStore::Mutate(MutateOp op, JobState set, const MutateFilter& filter, TimePoint now,
                           Duration dead_ttl, CountCallback durable) {
  if (context_.Refused(durable)) return;
  std::vector<Change> changes;
  size_t n = state_.Mutate(op, set, filter, ToUnixMicros(now),
                           std::chrono::duration_cast<std::chrono::microseconds>(dead_ttl).count(),
                           changes);
  context_.Commit(std::move(changes), [n, durable = std::move(durable)](Status s) {
    if (!s.ok()) {
      durable(s);
    } else {
      durable(n);
    }
  });
}

void EmbeddedStore::SetPaused(const std::vector<std::string>& queues, bool paused, Done durable) {
  if (context_.Refused(durable)) return;
  std::vector<Change> changes;
  state_.SetPaused(queues, paused, changes);
  context_.Commit(std::move(changes), std::move(durable));
}

void EmbeddedStore::RemoveQueues(const std::vector<std::string>& queues, Done durable) {
  if (context_.Refused(durable)) return;
  std::vector<Change> changes;
  state_.RemoveQueues(queues, changes);
  context_.Commit(std::move(changes), std::move(durable));
}

void EmbeddedStore::CountOutcome(int64_t processed, int64_t failures, TimePoint now) {
  if (context_.degraded()) return;  // refused like every change; there is no callback to tell
  std::vector<Change> changes;
  context_.AddOutcome(processed, failures, now, changes);
  context_.Commit(std::move(changes), nullptr);
}

void EmbeddedStore::Flush(Done durable) {
  if (context_.Refused(durable)) return;
  std::vector<Change> changes;
  state_.DeleteAll(changes);
  context_.Commit(std::move(changes), std::move(durable));
}

void EmbeddedStore::Stats(std::function<void(Result<StoreStats>)> cb) { cb(state_.Stats()); }

void EmbeddedStore::List(JobState set, size_t offset, size_t limit, JobsCallback cb) {
  context_.AfterLoads(
      [this, set, offset, limit, cb = std::move(cb)] { cb(state_.List(set, offset, limit)); });
}

void EmbeddedStore::FindJob(const std::string& jid, JobCallback cb) {
  context_.FindJob(jid, std::move(cb));
}

}  // namespace bulkhead
