// MemoryState's queues of slots and their compaction: hot and cold queued jobs (queue_slot.h),
// the queues' numbering, and the moves between hot and cold (contracts in memory_state.h).
#include <spdlog/spdlog.h>

#include <algorithm>

#include "bulkhead/store/memory_state.h"

namespace bulkhead {

MemoryState::Queue& MemoryState::QueueNamed(const std::string& name) {
  auto [it, inserted] = queues_.try_emplace(name);
  if (inserted) {
    it->second.no = static_cast<uint32_t>(queue_by_no_.size());
    queue_by_no_.push_back(&*it);
  }
  return it->second;
}

void MemoryState::ForgetQueue(QueueMap::iterator it) {
  queue_by_no_[it->second.no] = nullptr;
  queues_.erase(it);
}

void MemoryState::EraseSlot(Queue& q, QueueSlot* slot) {
  auto& dq = q.jobs;
  if (dq.empty()) return;
  if (&dq.back() == slot) {
    dq.pop_back();
  } else if (&dq.front() == slot) {
    dq.pop_front();
  } else {
    // Out of the middle (an admin's removal): the slot stays as a hole, so that no other slot
    // moves (the index and the hot jobs point at them); FETCH drops holes as they reach the front.
    slot->hot = nullptr;
    slot->id = 0;
    slot->jid = CompactJid();
    ++q.holes;
  }
  TrimHoles(q);
}

void MemoryState::TrimHoles(Queue& q) {
  while (!q.jobs.empty() && IsHole(q.jobs.back())) {
    q.jobs.pop_back();
    --q.holes;
  }
  while (!q.jobs.empty() && IsHole(q.jobs.front())) {
    q.jobs.pop_front();
    --q.holes;
  }
}

MemoryState::Entry* MemoryState::ThawSlot(QueueSlot& slot) {
  const auto* named = queue_by_no_[slot.queue_no];
  auto entry = std::make_unique<Entry>();
  Entry* e = entry.get();
  e->id = slot.id;
  e->job.jid = std::string(slot.jid.view());
  e->job.queue = named->first;
  e->job.state = JobState::kQueued;
  e->job.enqueued_us = slot.enqueued_us;
  e->job.reserve_for_s = slot.reserve_for_s;
  e->slot = &slot;
  e->link = next_link_++;  // not evictable under an earlier link
  e->payload_pending = true;
  cold_.Erase(e->job.jid);
  slot.hot = e;
  slot.jid = CompactJid();
  slot.requested = 0;
  by_jid_.emplace(e->job.jid, std::move(entry));
  return e;
}

MemoryState::Entry* MemoryState::Thaw(const std::string& jid) {
  auto it = by_jid_.find(jid);
  if (it != by_jid_.end()) return it->second.get();
  QueueSlot* slot = cold_.Find(jid);
  return slot ? ThawSlot(*slot) : nullptr;
}

void MemoryState::NoteColdFetch(Queue& q, const Entry& e, bool requested, ColdFetch& cold) {
  // Never more than the queue holds (rows read ahead may leave it without a FETCH: FLUSH, a
  // delete, a move), so that a stale estimate cannot hold the next reads back for long.
  q.read_ahead = std::min(q.read_ahead, q.jobs.size() - q.holes);
  bool from_ahead = q.read_ahead > 0;
  if (from_ahead) --q.read_ahead;
  if (e.payload_pending) {
    cold.id = e.id;
    cold.requested = requested;
  }
  // A cold job no read has asked for reads its row and the next ones. While FETCH works through
  // rows read ahead, the next ones are asked for before those run out, so that the log reads
  // them while the loop serves the rows it has.
  bool due = from_ahead && q.read_ahead < kReadAheadDepth;
  if (due && q.scans_to_skip > 0) {
    --q.scans_to_skip;
    due = false;
  }
  if ((e.payload_pending && !requested) || due) ReadAhead(q, cold);
}

void MemoryState::ReadAhead(Queue& q, ColdFetch& cold) {
  // Bounded: hot slots, holes and the rows an earlier read-ahead asked for are skipped.
  size_t looked = 0;
  for (QueueSlot& slot : q.jobs) {
    if (cold.ahead.size() >= kReadAhead || ++looked > kReadAheadDepth + 2 * kReadAhead) break;
    if (slot.hot || IsHole(slot) || slot.requested) continue;
    slot.requested = 1;
    cold.ahead.push_back(slot.id);
  }
  q.read_ahead += cold.ahead.size();
  // Short of a full read, the queue has (almost) no cold row left to ask for: a queue shorter
  // than the depth would otherwise be scanned again by every FETCH, to find nothing.
  q.scans_to_skip = cold.ahead.size() < kReadAhead ? kReadAhead / 4 : 0;
}

void MemoryState::Warm(int64_t id, JobRecord row) {
  QueueSlot* slot = cold_.Find(row.jid);
  if (slot == nullptr || slot->id != id || row.state != JobState::kQueued) return;
  Entry* e = ThawSlot(*slot);
  e->job.payload = std::move(row.payload);
  e->job.jobtype = std::move(row.jobtype);
  e->payload_pending = false;
}

Status MemoryState::LoadColdJob(int64_t id, std::string_view jid, std::string_view queue,
                                int64_t seq, int64_t enqueued_us, int32_t reserve_for_s) {
  if (!compact_) {
    return Status::FailedPrecondition("a queued row without its payload needs compaction on");
  }
  next_id_ = std::max(next_id_, id + 1);
  next_seq_ = std::max(next_seq_, seq + 1);
  if (loading_into_ == nullptr || queue != loading_queue_) {
    loading_queue_.assign(queue);
    loading_into_ = &QueueNamed(loading_queue_);
    loading_seqs_ = &loading_[loading_into_->no];
  }
  loading_into_->jobs.push_back(QueueSlot{.id = id,
                                          .enqueued_us = enqueued_us,
                                          .reserve_for_s = reserve_for_s,
                                          .queue_no = loading_into_->no,
                                          .jid = CompactJid(jid)});
  loading_seqs_->push_back(seq);
  return Status::Ok();
}

void MemoryState::SortLoaded(Queue& q, const std::vector<int64_t>& seqs) {
  // Rows are mostly read in FIFO order already (ids and sequences both grow with each PUSH); a
  // job queued again (a retry) has a later sequence than its row id suggests.
  if (std::is_sorted(seqs.begin(), seqs.end())) return;
  std::vector<uint32_t> order(seqs.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return seqs[a] < seqs[b]; });
  std::deque<QueueSlot> sorted;
  for (uint32_t i : order) sorted.push_back(std::move(q.jobs[i]));
  q.jobs.swap(sorted);
}

void MemoryState::DropDuplicateRow(QueueSlot& slot) {
  spdlog::warn("stored jobs: skipping row {}: duplicate jid {}", slot.id, slot.jid.view());
  slot.id = 0;  // a hole (IsHole), dropped at either end, else when FETCH reaches it
  slot.jid = CompactJid();
  ++queue_by_no_[slot.queue_no]->second.holes;
}

void MemoryState::FinishLoadCold() {
  size_t rows_in_all = 0;
  for (const auto& [no, seqs] : loading_) rows_in_all += seqs.size();
  cold_.Reserve(cold_.size() + rows_in_all);  // one table for them all: no rehash while inserting
  for (auto& [no, seqs] : loading_) {
    Queue& q = queue_by_no_[no]->second;
    SortLoaded(q, seqs);
    std::vector<int64_t>().swap(seqs);
    // The index entries of the next kAhead slots are fetched while a slot is inserted.
    constexpr size_t kAhead = 16;
    auto ahead = q.jobs.begin();
    for (size_t i = 0; i < kAhead && ahead != q.jobs.end(); ++i, ++ahead) {
      cold_.Prefetch(ahead->jid.view());
    }
    for (QueueSlot& slot : q.jobs) {
      if (ahead != q.jobs.end()) cold_.Prefetch((ahead++)->jid.view());
      if (!cold_.InsertNew(&slot)) DropDuplicateRow(slot);
    }
  }
  // A jid held whole (a set's job, a reservation) and also queued cold: the queued row is the
  // duplicate. Looked up from the whole jobs, which are few, not from every queued row.
  for (const auto& [jid, entry] : by_jid_) {
    QueueSlot* slot = cold_.size() > 0 ? cold_.Find(jid) : nullptr;
    if (slot == nullptr) continue;
    cold_.Erase(jid);
    DropDuplicateRow(*slot);
  }
  for (auto& [no, seqs] : loading_) TrimHoles(queue_by_no_[no]->second);
  loading_.clear();
  loading_into_ = nullptr;
  loading_seqs_ = nullptr;
}

void MemoryState::EvictDurable(const std::vector<Evictable>& jobs) {
  for (size_t k = 0; k < jobs.size(); ++k) {
    // The index entry a few jobs on is fetched while this one turns cold.
    if (k + kPrefetchAhead < jobs.size()) cold_.Prefetch(jobs[k + kPrefetchAhead].jid);
    const Evictable& ev = jobs[k];
    auto it = by_jid_.find(ev.jid);
    if (it == by_jid_.end()) continue;
    Entry* e = it->second.get();
    if (e->id != ev.id || e->link != ev.link || e->job.state != JobState::kQueued ||
        e->slot == nullptr || e->payload_pending) {
      continue;
    }
    // A short queue keeps its jobs whole: the next FETCHes take them without a read (at most
    // kHotQueue such jobs per queue: one is kept only while its queue is that short).
    Queue& q = QueueNamed(e->job.queue);
    if (q.jobs.size() - q.holes <= kHotQueue) continue;
    QueueSlot& slot = *e->slot;
    slot.id = e->id;
    slot.enqueued_us = e->job.enqueued_us;
    slot.reserve_for_s = e->job.reserve_for_s;
    slot.queue_no = q.no;
    slot.jid = CompactJid(e->job.jid);
    slot.hot = nullptr;
    by_jid_.erase(it);
    cold_.Insert(&slot);
  }
}

JobRecord MemoryState::FillPayload(int64_t id, JobRecord row) {
  auto it = by_jid_.find(row.jid);
  if (it == by_jid_.end() || it->second->id != id) return row;
  Entry* e = it->second.get();
  if (e->payload_pending) {
    e->job.payload = std::move(row.payload);
    e->job.jobtype = std::move(row.jobtype);
    e->payload_pending = false;
  }
  return e->job;
}

bool MemoryState::RemoveRow(const std::string& jid, int64_t id, std::vector<Change>& out) {
  auto it = by_jid_.find(jid);
  bool same = it != by_jid_.end() ? it->second->id == id : ColdId(jid) == id;
  return same && Remove(jid, out);
}

int64_t MemoryState::ColdId(const std::string& jid) const {
  const QueueSlot* slot = cold_.Find(jid);
  return slot ? slot->id : 0;
}

}  // namespace bulkhead
