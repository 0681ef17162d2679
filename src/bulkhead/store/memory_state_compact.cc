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
  // Keep both ends live: Stats reads the front, the next erase may be at either end.
  while (!dq.empty() && IsHole(dq.back())) {
    dq.pop_back();
    --q.holes;
  }
  while (!dq.empty() && IsHole(dq.front())) {
    dq.pop_front();
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

void MemoryState::ReadAhead(Queue& q, ColdFetch& cold) {
  size_t looked = 0;  // bounded: hot slots and holes between the cold ones are skipped
  for (QueueSlot& slot : q.jobs) {
    if (cold.ahead.size() >= kReadAhead || ++looked > 4 * kReadAhead) break;
    if (slot.hot || IsHole(slot)) continue;
    if (slot.requested) break;  // an earlier read-ahead took it and the rest
    slot.requested = 1;
    cold.ahead.push_back(slot.id);
  }
}

void MemoryState::Warm(int64_t id, JobRecord row) {
  QueueSlot* slot = cold_.Find(row.jid);
  if (slot == nullptr || slot->id != id || row.state != JobState::kQueued) return;
  Entry* e = ThawSlot(*slot);
  e->job.payload = std::move(row.payload);
  e->job.jobtype = std::move(row.jobtype);
  e->payload_pending = false;
}

void MemoryState::FinishLoadCold() {
  std::string jid;  // one buffer for every row's lookup: no allocation per queued job at start
  for (auto& [no, rows] : loading_) {
    std::sort(rows.begin(), rows.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    Queue& q = queue_by_no_[no]->second;
    for (auto& [seq, slot] : rows) {
      jid.assign(slot.jid.view());
      if (Contains(jid)) {
        spdlog::warn("stored jobs: skipping row {}: duplicate jid {}", slot.id, slot.jid.view());
        continue;
      }
      q.jobs.push_back(std::move(slot));
      cold_.Insert(&q.jobs.back());
    }
    std::vector<std::pair<int64_t, QueueSlot>>().swap(rows);
  }
  loading_.clear();
}

void MemoryState::EvictDurable(const std::vector<Evictable>& jobs) {
  for (const Evictable& ev : jobs) {
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

int64_t MemoryState::ColdId(const std::string& jid) const {
  const QueueSlot* slot = cold_.Find(jid);
  return slot ? slot->id : 0;
}

}  // namespace bulkhead
