#include "bulkhead/store/embedded_context.h"

#include "bulkhead/util/time_format.h"

namespace bulkhead {

EmbeddedContext::EmbeddedContext(std::unique_ptr<ChangeLog> log) : log_(std::move(log)) {
  // With a log, a queued job's payload lives in the log once durable (queue_slot.h).
  if (log_) state_.EnableCompaction();
}

Status EmbeddedContext::Load() {
  if (!log_) return Status::Ok();
  return log_->Load(state_);
}

void EmbeddedContext::Close() {
  if (closed_) return;
  closed_ = true;
  if (log_) log_->Close();
}

bool EmbeddedContext::degraded() const { return log_ && !log_->failure().ok(); }

std::string EmbeddedContext::degraded_reason() const {
  if (!log_) return {};
  Status failure = log_->failure();
  if (failure.ok()) return {};
  return "store degraded: " + failure.message() + "; restart bulkhead once the disk is fixed";
}

Status EmbeddedContext::Writable() const {
  if (!degraded()) return Status::Ok();
  return Status::Unavailable(degraded_reason());
}

void EmbeddedContext::Commit(std::vector<Change> changes, std::function<void(Status)> durable) {
  if (!log_ || changes.empty()) {
    if (durable) durable(Status::Ok());
    return;
  }
  auto evictable = state_.TakeEvictable();
  if (evictable.empty()) {
    log_->Append(std::move(changes), std::move(durable));
    return;
  }
  // Once durable, the queued jobs of this change keep only their compact slot in memory.
  log_->Append(std::move(changes),
               [this, life = std::weak_ptr<int>(life_), evictable = std::move(evictable),
                durable = std::move(durable)](Status s) {
                 if (s.ok() && life.lock()) state_.EvictDurable(evictable);
                 if (durable) durable(s);
               });
}

void EmbeddedContext::AddOutcome(int64_t processed, int64_t failures, TimePoint now,
                                 std::vector<Change>& changes) {
  // Every ACK and FAIL lands here: the day's counter names are made once a day, not once a job.
  int64_t day_number = ToUnixMicros(now) / (86'400LL * 1'000'000);
  if (day_number != counted_day_number_) {
    counted_day_number_ = day_number;
    std::string day = FormatDate(now);
    processed_today_ = "processed:" + day;
    failures_today_ = "failures:" + day;
  }
  if (processed != 0) {
    state_.AddCounter("processed", processed, changes);
    state_.AddCounter(processed_today_, processed, changes);
  }
  if (failures != 0) {
    state_.AddCounter("failures", failures, changes);
    state_.AddCounter(failures_today_, failures, changes);
  }
}

void EmbeddedContext::Fetch(const std::vector<std::string>& queues, const ThrottledFetch* throttled,
                            const std::string& holder, TimePoint now, JobCallback cb) {
  if (Refused(cb)) return;
  std::vector<Change> changes;
  changes.reserve(3);  // the reservation, its holder, a track's state: no regrowth
  MemoryState::ColdFetch cold;
  auto job = state_.Fetch(queues, ToUnixMicros(now), changes, throttled, &cold);
  if (job) state_.tracks().SetState(job->jid, kTrackWorking, false, ToUnixMicros(now), changes);
  if (job && !holder.empty()) state_.SetHolder(job->jid, holder, changes);
  Commit(std::move(changes), nullptr);
  std::vector<int64_t> ids;
  if (cold.id != 0) {
    waiting_.emplace(
        cold.id,
        Waiter{std::move(cb), job->jid, queues,
               throttled ? std::optional<ThrottledFetch>(*throttled) : std::nullopt, holder, now});
    // Unless its row is on its way already (an earlier FETCH read it ahead): answered with that.
    if (!cold.requested || !reading_.contains(cold.id)) ids.push_back(cold.id);
  }
  bool waited_for = !ids.empty();
  ids.insert(ids.end(), cold.ahead.begin(), cold.ahead.end());
  if (!ids.empty()) {
    for (int64_t id : ids) reading_.insert(id);
    auto done = [this, life = std::weak_ptr<int>(life_), ids](auto rows) {
      if (life.lock()) RowsRead(ids, std::move(rows));
    };
    // Rows only read ahead hold up no other answer (a FETCH that takes one later waits for it).
    waited_for ? log_->ReadJobs(ids, std::move(done)) : log_->ReadAhead(ids, std::move(done));
  }
  if (cold.id == 0) {
    AfterLoads([cb = std::move(cb), job = std::move(job)]() mutable { cb(std::move(job)); });
  }
}

void EmbeddedContext::RowsRead(const std::vector<int64_t>& ids,
                               Result<std::vector<std::optional<JobRecord>>> rows) {
  // A waiter leaves waiting_ only as its row is taken: a read a callback below makes (AfterLoads)
  // waits for the later rows too.
  for (size_t i = 0; i < ids.size(); ++i) {
    int64_t id = ids[i];
    size_t ahead = i + MemoryState::kPrefetchAhead;
    if (rows.ok() && ahead < ids.size() && (*rows)[ahead]) state_.PrefetchCold((*rows)[ahead]->jid);
    reading_.erase(id);
    auto waiter = waiting_.find(id);
    if (waiter == waiting_.end()) {
      if (rows.ok() && (*rows)[i]) state_.Warm(id, std::move(*(*rows)[i]));
      continue;
    }
    Waiter w = std::move(waiter->second);
    waiting_.erase(waiter);
    JobCallback& cb = w.cb;
    if (!rows.ok()) {
      cb(rows.status());
    } else if (!(*rows)[i]) {
      // Not stored: the log set it aside as damaged (never handed out). Forget it, take the next.
      ForgetSetAside(w.jid, id);
      Fetch(w.queues, w.throttled ? &*w.throttled : nullptr, w.holder, w.now, std::move(cb));
    } else {
      cb(std::optional<JobRecord>(state_.FillPayload(id, std::move(*(*rows)[i]))));
    }
  }
}

void EmbeddedContext::ForgetSetAside(const std::string& jid, int64_t id) {
  std::vector<Change> changes;
  state_.RemoveRow(jid, id, changes);
  Commit(std::move(changes), nullptr);
}

void EmbeddedContext::AfterLoads(std::function<void()> read) {
  // Only a fetched job waits for its payload (a read ahead of FETCH holds up nothing).
  if (waiting_.empty()) {
    read();
    return;
  }
  log_->ReadJobs({}, [read = std::move(read)](auto) { read(); });
}

void EmbeddedContext::FindJob(const std::string& jid, JobCallback cb) {
  int64_t id = state_.ColdId(jid);
  if (id == 0) {
    AfterLoads([this, jid, cb = std::move(cb)] {
      const JobRecord* job = state_.FindJob(jid);
      cb(job ? std::optional<JobRecord>(*job) : std::nullopt);
    });
    return;
  }
  log_->ReadJobs({id},
                 [this, life = std::weak_ptr<int>(life_), jid, id, cb = std::move(cb)](auto rows) {
                   if (!rows.ok()) return cb(rows.status());
                   // Set aside as damaged by the log (or gone): forgotten here too.
                   if (!(*rows)[0] && life.lock()) ForgetSetAside(jid, id);
                   cb(std::move((*rows)[0]));
                 });
}

}  // namespace bulkhead
