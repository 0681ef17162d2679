#include "bulkhead/store/memory_state.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "bulkhead/util/clock.h"
#include "bulkhead/util/time_format.h"

namespace bulkhead {
namespace {

// Appends the change in place: a Change is large (368 bytes), built once, never moved.
void AppendJobChange(std::vector<Change>& out, Change::Kind kind, int64_t id,
                     const JobRecord& job) {
  Change& c = out.emplace_back(kind);
  c.id = id;
  c.job = job;
}

}  // namespace

MemoryState::SortedSet* MemoryState::SetFor(JobState s) {
  return const_cast<SortedSet*>(std::as_const(*this).SetFor(s));
}

const MemoryState::SortedSet* MemoryState::SetFor(JobState s) const {
  switch (s) {
    case JobState::kScheduled:
      return &scheduled_;
    case JobState::kRetry:
      return &retries_;
    case JobState::kDead:
      return &dead_;
    case JobState::kWorking:
      return &working_;
    case JobState::kQueued:
      return nullptr;
  }
  return nullptr;
}

void MemoryState::Link(Entry* e) {
  if (e->job.state == JobState::kQueued) {
    Queue& q = QueueNamed(e->job.queue);
    q.jobs.push_back(QueueSlot{.hot = e});
    e->slot = &q.jobs.back();
    e->link = next_link_++;
    if (compact_) evictable_.push_back(Evictable{e->job.jid, e->id, e->link});
  } else {
    SetFor(e->job.state)->insert({e->job.score, e->id, e});
  }
}

void MemoryState::Unlink(Entry* e) {
  if (e->job.state == JobState::kQueued) {
    auto it = queues_.find(e->job.queue);
    if (it == queues_.end() || e->slot == nullptr) return;
    EraseSlot(it->second, e->slot);
    e->slot = nullptr;
  } else {
    SetFor(e->job.state)->erase({e->job.score, e->id, e});
  }
}

void MemoryState::AssignQueueSeq(Entry* e) { e->job.score = next_seq_++; }

void MemoryState::SetEnqueuedAt(JobRecord& job, int64_t now_us) {
  job.enqueued_us = now_us;
  auto doc = nlohmann::json::parse(job.payload, nullptr, /*allow_exceptions=*/false);
  if (doc.is_object()) {
    doc["enqueued_at"] = FormatRfc3339(FromUnixMicros(now_us));
    job.payload = doc.dump();
  }
}

Status MemoryState::LoadJob(int64_t id, JobRecord job) {
  if (Contains(job.jid)) {
    return Status::AlreadyExists("duplicate jid " + job.jid + " in stored jobs");
  }
  if (compact_ && job.state == JobState::kQueued) {
    return LoadColdJob(id, job.jid, job.queue, job.score, job.enqueued_us, job.reserve_for_s);
  }
  auto entry = std::make_unique<Entry>(Entry{id, std::move(job)});
  Entry* e = entry.get();
  by_jid_.emplace(e->job.jid, std::move(entry));
  next_id_ = std::max(next_id_, id + 1);
  if (e->job.state == JobState::kQueued) {
    next_seq_ = std::max(next_seq_, e->job.score + 1);
  }
  // Every queue a stored job names stays known after a restart (INFO lists it, size 0 when none of
  // its jobs is waiting), not only those with jobs waiting.
  QueueNamed(e->job.queue);
  Link(e);
  return Status::Ok();
}

void MemoryState::LoadCounter(const std::string& name, int64_t value) { counters_[name] = value; }

void MemoryState::LoadPaused(const std::string& queue) { QueueNamed(queue).paused = true; }

void MemoryState::LoadSigningKey(const std::string& key_id, std::string pem) {
  signing_keys_.insert_or_assign(key_id, std::move(pem));
}

void MemoryState::LoadHostState(HostStateRecord record) {
  std::string host = record.host;
  host_states_.insert_or_assign(std::move(host), std::move(record));
}

void MemoryState::FinishLoad() {
  // Queued rows load either all hot (no compaction) or all cold (FinishLoadCold orders those).
  for (auto& [name, q] : queues_) {
    if (compact_) continue;
    std::sort(q.jobs.begin(), q.jobs.end(), [](const QueueSlot& a, const QueueSlot& b) {
      return a.hot->job.score < b.hot->job.score;
    });
    for (QueueSlot& slot : q.jobs) slot.hot->slot = &slot;
  }
  FinishLoadCold();
  // Every stored reservation holds a slot, taken at its expiry minus its reserve_for.
  for (const auto& [score, id, e] : working_) {
    slots_.Take(e->job.queue, e->job.jid, ThrottleSlots::kRestoredWid,
                score - int64_t{e->job.reserve_for_s} * 1'000'000);
  }
  holders_.Retain([this](const std::string& jid) { return IsWorking(jid); });
}

void MemoryState::ReleaseSlot(const Entry* e) {
  if (e->job.state == JobState::kWorking) slots_.Release(e->job.queue, e->job.jid);
}

std::vector<ThrottleUse> MemoryState::ThrottleUses(const std::vector<QueueThrottle>& throttles,
                                                   int64_t now_us) {
  std::vector<ThrottleUse> uses;
  for (const QueueThrottle& t : throttles) uses.push_back(slots_.Use(t, now_us));
  return uses;
}

Status MemoryState::Add(JobRecord job, std::vector<Change>& out) {
  if (Contains(job.jid)) {
    return Status::AlreadyExists("jid " + job.jid + " is already known to the server");
  }
  auto entry = std::make_unique<Entry>(Entry{next_id_++, std::move(job)});
  Entry* e = entry.get();
  if (e->job.state == JobState::kQueued) {
    AssignQueueSeq(e);
  }
  by_jid_.emplace(e->job.jid, std::move(entry));
  Link(e);
  AppendJobChange(out, Change::Kind::kInsertJob, e->id, e->job);
  return Status::Ok();
}

std::optional<JobRecord> MemoryState::Fetch(const std::vector<std::string>& queues, int64_t now_us,
                                            std::vector<Change>& out,
                                            const ThrottledFetch* throttled, ColdFetch* cold) {
  for (const auto& name : queues) {
    auto it = queues_.find(name);
    if (it == queues_.end() || it->second.paused || it->second.jobs.empty()) continue;
    const QueueThrottle* throttle = nullptr;
    if (throttled) {
      for (const QueueThrottle& t : throttled->throttles) {
        if (t.queue == name) throttle = &t;
      }
      if (throttle && slots_.Full(*throttle, throttled->wid, now_us)) continue;
    }
    QueueSlot& front = it->second.jobs.front();
    bool requested = front.hot == nullptr && front.requested;
    Entry* e = front.hot ? front.hot : ThawSlot(front);
    if (throttle) slots_.Take(name, e->job.jid, throttled->wid, now_us);
    EraseSlot(it->second, &front);
    e->slot = nullptr;
    if (cold) NoteColdFetch(it->second, *e, requested, *cold);
    e->job.state = JobState::kWorking;
    e->job.score = now_us + int64_t{e->job.reserve_for_s} * 1'000'000;
    Link(e);
    Change& c = out.emplace_back(Change::Kind::kUpdateState);
    c.id = e->id;
    c.job.state = e->job.state;
    c.job.score = e->job.score;
    return e->job;
  }
  return std::nullopt;
}

std::optional<JobRecord> MemoryState::Ack(const std::string& jid, std::vector<Change>& out) {
  auto it = by_jid_.find(jid);
  if (it == by_jid_.end() || it->second->job.state != JobState::kWorking) return std::nullopt;
  Entry* e = it->second.get();
  ReleaseSlot(e);
  holders_.Drop(jid, out);
  Unlink(e);
  out.emplace_back(Change::Kind::kDeleteJob).id = e->id;
  std::optional<JobRecord> job(std::move(e->job));
  by_jid_.erase(it);
  return job;
}

std::optional<JobRecord> MemoryState::GetWorking(const std::string& jid) const {
  auto it = by_jid_.find(jid);
  if (it == by_jid_.end() || it->second->job.state != JobState::kWorking) return std::nullopt;
  return it->second->job;
}

Status MemoryState::ExtendReservation(const std::string& jid, int64_t until_us,
                                      std::vector<Change>& out) {
  auto it = by_jid_.find(jid);
  if (it == by_jid_.end() || it->second->job.state != JobState::kWorking) {
    return Status::NotFound("job " + jid + " is not reserved");
  }
  Entry* e = it->second.get();
  Unlink(e);
  e->job.score = until_us;
  Link(e);
  Change c{Change::Kind::kUpdateState};
  c.id = e->id;
  c.job.state = e->job.state;
  c.job.score = e->job.score;
  out.push_back(std::move(c));
  return Status::Ok();
}

Status MemoryState::Move(const JobRecord& job, int64_t now_us, std::vector<Change>& out) {
  Entry* e = Thaw(job.jid);
  if (e == nullptr) return Status::NotFound("Job not found " + job.jid);
  if (e->payload_pending) {  // the caller gives the whole job
    e->job.jobtype = job.jobtype;
    e->payload_pending = false;
  }
  ReleaseSlot(e);
  holders_.Drop(job.jid, out);
  Unlink(e);
  e->job.state = job.state;
  e->job.queue = job.queue;
  e->job.payload = job.payload;
  e->job.score = job.score;
  if (job.state == JobState::kQueued) {
    SetEnqueuedAt(e->job, now_us);
    AssignQueueSeq(e);
  }
  Link(e);
  AppendJobChange(out, Change::Kind::kUpdateJob, e->id, e->job);
  return Status::Ok();
}

Status MemoryState::FailReserved(const std::string& jid, int64_t reserved_until_us,
                                 const std::optional<JobRecord>& next, int64_t now_us,
                                 std::vector<Change>& out) {
  auto it = by_jid_.find(jid);
  if (it == by_jid_.end() || it->second->job.state != JobState::kWorking ||
      it->second->job.score != reserved_until_us) {
    return Status::FailedPrecondition("job " + jid + " is no longer under that reservation");
  }
  if (!next) {
    Remove(jid, out);
    return Status::Ok();
  }
  return Move(*next, now_us, out);
}

bool MemoryState::Remove(const std::string& jid, std::vector<Change>& out) {
  if (Thaw(jid) == nullptr) return false;
  auto it = by_jid_.find(jid);
  ReleaseSlot(it->second.get());
  holders_.Drop(jid, out);
  Unlink(it->second.get());
  Change c{Change::Kind::kDeleteJob};
  c.id = it->second->id;
  out.push_back(std::move(c));
  by_jid_.erase(it);
  return true;
}

std::vector<JobRecord> MemoryState::EnqueueDue(JobState set, int64_t now_us, size_t limit,
                                               std::vector<Change>& out) {
  std::vector<JobRecord> moved;
  auto* s = SetFor(set);
  while (!s->empty() && moved.size() < limit) {
    auto [score, id, e] = *s->begin();
    if (score > now_us) break;
    s->erase(s->begin());
    e->job.state = JobState::kQueued;
    SetEnqueuedAt(e->job, now_us);
    AssignQueueSeq(e);
    Link(e);
    AppendJobChange(out, Change::Kind::kUpdateJob, e->id, e->job);
    moved.push_back(e->job);
  }
  return moved;
}

std::vector<JobRecord> MemoryState::ExpiredReservations(int64_t now_us, size_t limit) const {
  std::vector<JobRecord> expired;
  for (const auto& [score, id, e] : working_) {
    if (score > now_us || expired.size() >= limit) break;
    expired.push_back(e->job);
  }
  return expired;
}

size_t MemoryState::PurgeDead(int64_t now_us, size_t limit, std::vector<Change>& out) {
  size_t n = 0;
  while (!dead_.empty() && n < limit) {
    auto [score, id, e] = *dead_.begin();
    if (score > now_us) break;
    Remove(e->job.jid, out);
    ++n;
  }
  return n;
}

size_t MemoryState::Mutate(MutateOp op, JobState set, const MutateFilter& filter, int64_t now_us,
                           int64_t dead_ttl_us, std::vector<Change>& out) {
  auto* s = SetFor(set);
  std::vector<Entry*> targets;
  for (const auto& [score, id, e] : *s) {
    if (op == MutateOp::kClear || filter.Matches(e->job)) targets.push_back(e);
  }
  for (Entry* e : targets) {
    switch (op) {
      case MutateOp::kClear:
      case MutateOp::kDiscard:
        Remove(e->job.jid, out);
        break;
      case MutateOp::kKill: {
        if (set == JobState::kDead) break;
        JobRecord moved = e->job;
        moved.state = JobState::kDead;
        moved.score = now_us + dead_ttl_us;
        Move(moved, now_us, out);
        break;
      }
      case MutateOp::kRequeue: {
        JobRecord moved = e->job;
        moved.state = JobState::kQueued;
        Move(moved, now_us, out);
        break;
      }
    }
  }
  return targets.size();
}

void MemoryState::SetPaused(const std::vector<std::string>& queues, bool paused,
                            std::vector<Change>& out) {
  auto apply = [&](const std::string& name, Queue& q) {
    if (q.paused == paused) return;
    q.paused = paused;
    Change c{Change::Kind::kSetPaused};
    c.name = name;
    c.flag = paused;
    out.push_back(std::move(c));
  };
  for (const auto& name : queues) {
    if (name == "*") {
      for (auto& [n, q] : queues_) apply(n, q);
    } else {
      apply(name, QueueNamed(name));
    }
  }
}

void MemoryState::RemoveQueues(const std::vector<std::string>& queues, std::vector<Change>& out) {
  std::vector<std::string> names;
  for (const auto& name : queues) {
    if (name == "*") {
      for (const auto& [n, q] : queues_) names.push_back(n);
    } else if (queues_.contains(name)) {
      names.push_back(name);
    }
  }
  for (const auto& name : names) {
    auto it = queues_.find(name);
    if (it == queues_.end()) continue;
    std::deque<QueueSlot> jobs = std::move(it->second.jobs);
    bool paused = it->second.paused;
    ForgetQueue(it);
    for (QueueSlot& slot : jobs) {
      if (IsHole(slot)) continue;
      Change c{Change::Kind::kDeleteJob};
      c.id = slot.hot ? slot.hot->id : slot.id;
      out.push_back(std::move(c));
      if (slot.hot) {
        by_jid_.erase(slot.hot->job.jid);
      } else {
        cold_.Erase(slot.jid.view());
      }
    }
    if (paused) {
      Change c{Change::Kind::kSetPaused};
      c.name = name;
      c.flag = false;
      out.push_back(std::move(c));
    }
  }
}

void MemoryState::AddCounter(const std::string& name, int64_t delta, std::vector<Change>& out) {
  counters_[name] += delta;
  Change& c = out.emplace_back(Change::Kind::kAddCounter);
  c.name = name;
  c.delta = delta;
}

void MemoryState::DeleteAll(std::vector<Change>& out) {
  by_jid_.clear();
  cold_.Clear();
  queues_.clear();
  queue_by_no_.clear();
  evictable_.clear();
  scheduled_.clear();
  retries_.clear();
  dead_.clear();
  working_.clear();
  slots_.Clear();
  holders_.Clear();
  counters_.clear();
  unique_locks_.clear();  // the sqlite: log's kDeleteAll deletes their rows too
  unique_key_of_.clear();
  batches_.Clear();
  tracks_.Clear();
  taken_.Clear();
  out.push_back(Change{Change::Kind::kDeleteAll});
}

void MemoryState::PutSigningKey(const std::string& key_id, const std::string& pem,
                                std::vector<Change>& out) {
  signing_keys_.insert_or_assign(key_id, pem);
  Change c{Change::Kind::kPutSigningKey};
  c.name = key_id;
  c.value = pem;
  out.push_back(std::move(c));
}

bool MemoryState::RemoveSigningKey(const std::string& key_id, std::vector<Change>& out) {
  if (signing_keys_.erase(key_id) == 0) return false;
  Change c{Change::Kind::kDeleteSigningKey};
  c.name = key_id;
  out.push_back(std::move(c));
  return true;
}

void MemoryState::PutHostState(const HostStateRecord& record, std::vector<Change>& out) {
  host_states_.insert_or_assign(record.host, record);
  Change c{Change::Kind::kPutHostState};
  c.host_state = record;
  out.push_back(std::move(c));
}

bool MemoryState::RemoveHostState(const std::string& host, std::vector<Change>& out) {
  if (host_states_.erase(host) == 0) return false;
  Change c{Change::Kind::kDeleteHostState};
  c.name = host;
  out.push_back(std::move(c));
  return true;
}

StoreStats MemoryState::Stats() const {
  StoreStats s;
  for (const auto& [name, q] : queues_) {
    QueueStats qs;
    qs.size = q.jobs.size() - q.holes;
    qs.paused = q.paused;
    if (!q.jobs.empty()) {
      const QueueSlot& front = q.jobs.front();
      qs.oldest_enqueued_us = front.hot ? front.hot->job.enqueued_us : front.enqueued_us;
    }
    s.enqueued += qs.size;
    s.queues.emplace(name, qs);
  }
  s.scheduled = scheduled_.size();
  s.retries = retries_.size();
  s.dead = dead_.size();
  s.working = working_.size();
  auto counter = [&](const char* n) {
    auto it = counters_.find(n);
    return it == counters_.end() ? int64_t{0} : it->second;
  };
  s.processed = counter("processed");
  s.failures = counter("failures");
  return s;
}

std::vector<JobRecord> MemoryState::List(JobState set, size_t offset, size_t limit) const {
  std::vector<JobRecord> out;
  const auto* s = SetFor(set);
  if (s == nullptr || offset >= s->size() || limit == 0) return out;
  size_t end = s->size() - offset > limit ? offset + limit : s->size();
  out.reserve(end - offset);
  // O(log n) to the first (the tree knows each subtree's size), then one step per job.
  auto it = s->find_by_order(offset);
  for (size_t i = offset; i < end; ++i, ++it) out.push_back(std::get<2>(*it)->job);
  return out;
}

bool MemoryState::IsPaused(const std::string& queue) const {
  auto it = queues_.find(queue);
  return it != queues_.end() && it->second.paused;
}

// --- Batches ---

Status MemoryState::LoadRecord(const std::string& space, const std::string& key,
                               const std::string& value) {
  if (space == kTrackSpace) return tracks_.Load(key, value);
  if (space == kTakenSpace) return taken_.Load(key, value);
  if (space == kHolderSpace) {
    holders_.Load(key, value);
    return Status::Ok();
  }
  return batches_.Load(space, key, value);
}

void MemoryState::ApplyBatchEffects(BatchEffects fx, std::vector<Change>& out) {
  for (JobRecord& job : fx.fire) {
    std::string jid = job.jid;
    Status s = Add(std::move(job), out);
    if (!s.ok()) spdlog::warn("batch callback {} not pushed: {}", jid, s.message());
  }
  const std::pair<const char*, int64_t> counts[] = {{kBatchCreatedCounter, fx.counts.created},
                                                    {kBatchCommittedCounter, fx.counts.committed},
                                                    {kBatchExpiredCounter, fx.counts.expired},
                                                    {kBatchSucceededCounter, fx.counts.succeeded}};
  for (auto [name, delta] : counts) {
    if (delta != 0) AddCounter(name, delta, out);
  }
}

Status MemoryState::CreateBatch(BatchRecord batch, int64_t now_us, std::vector<Change>& out) {
  BatchEffects fx;
  Status s = batches_.Create(std::move(batch), now_us, out, fx);
  if (s.ok()) ApplyBatchEffects(std::move(fx), out);
  return s;
}

Status MemoryState::AddBatchMember(JobRecord job, const std::string& bid, int64_t now_us,
                                   std::vector<Change>& out) {
  if (!batches_.Find(bid, now_us)) return Status::NotFound("No such batch " + bid);
  std::string jid = job.jid;
  Status s = Add(std::move(job), out);
  if (!s.ok()) return s;
  return batches_.Join(bid, jid, now_us, out);
}

Status MemoryState::CommitBatch(const std::string& bid, int64_t now_us, std::vector<Change>& out) {
  BatchEffects fx;
  Status s = batches_.Commit(bid, now_us, out, fx);
  if (s.ok()) ApplyBatchEffects(std::move(fx), out);
  return s;
}

void MemoryState::BatchJobEnded(const std::string& jid, bool acked, int64_t now_us,
                                std::vector<Change>& out) {
  BatchEffects fx;
  if (acked) {
    batches_.OnAck(jid, now_us, out, fx);
  } else {
    batches_.OnFail(jid, now_us, out, fx);
  }
  ApplyBatchEffects(std::move(fx), out);
}

size_t MemoryState::ExpireBatches(int64_t now_us, size_t limit, std::vector<Change>& out) {
  BatchEffects fx;
  size_t n = batches_.Expire(now_us, limit, out, fx);
  ApplyBatchEffects(std::move(fx), out);
  return n;
}

BatchCounts MemoryState::batch_counts() const {
  auto get = [this](const char* name) {
    auto it = counters_.find(name);
    return it == counters_.end() ? int64_t{0} : it->second;
  };
  return BatchCounts{.created = get(kBatchCreatedCounter),
                     .committed = get(kBatchCommittedCounter),
                     .expired = get(kBatchExpiredCounter),
                     .succeeded = get(kBatchSucceededCounter)};
}

}  // namespace bulkhead
