// MemoryState's unique-job locks and cron firing claims; the rest is in memory_state.cc.
#include "bulkhead/store/memory_state.h"
#include "bulkhead/store/unique_lock.h"

namespace bulkhead {
namespace {

Change LockChange(Change::Kind kind, const std::string& key) {
  Change c{kind};
  c.name = key;
  return c;
}

}  // namespace

void MemoryState::LoadUniqueLock(const std::string& key, std::string jid, int64_t until_us) {
  unique_key_of_[jid] = key;
  unique_locks_[key] = UniqueHold{std::move(jid), until_us};
}

void MemoryState::LoadCronFiring(const std::string& entry, int64_t due_us) {
  cron_firings_[entry] = due_us;
}

Status MemoryState::AddUnique(JobRecord job, const std::string& key, int64_t until_us,
                              int64_t now_us, std::vector<Change>& out) {
  if (Contains(job.jid)) {
    return Status::AlreadyExists("jid " + job.jid + " is already known to the server");
  }
  auto held = unique_locks_.find(key);
  if (held != unique_locks_.end() && held->second.jid != job.jid &&
      held->second.until_us > now_us) {
    return NotUniqueStatus();
  }
  if (held != unique_locks_.end()) unique_key_of_.erase(held->second.jid);
  ReleaseUniqueOf(job.jid, out);  // a job holds at most one lock
  unique_locks_[key] = UniqueHold{job.jid, until_us};
  unique_key_of_[job.jid] = key;
  Change c = LockChange(Change::Kind::kPutUniqueLock, key);
  c.value = job.jid;
  c.delta = until_us;
  out.push_back(std::move(c));
  return Add(std::move(job), out);
}

void MemoryState::ReleaseUniqueOf(const std::string& jid, std::vector<Change>& out) {
  auto it = unique_key_of_.find(jid);
  if (it == unique_key_of_.end()) return;
  auto held = unique_locks_.find(it->second);
  if (held != unique_locks_.end() && held->second.jid == jid) {
    out.push_back(LockChange(Change::Kind::kDeleteUniqueLock, held->first));
    unique_locks_.erase(held);
  }
  unique_key_of_.erase(it);
}

size_t MemoryState::PurgeExpiredUniqueLocks(int64_t now_us, size_t limit,
                                            std::vector<Change>& out) {
  size_t purged = 0;
  for (auto it = unique_locks_.begin(); it != unique_locks_.end() && purged < limit;) {
    if (it->second.until_us > now_us) {
      ++it;
      continue;
    }
    unique_key_of_.erase(it->second.jid);
    out.push_back(LockChange(Change::Kind::kDeleteUniqueLock, it->first));
    it = unique_locks_.erase(it);
    ++purged;
  }
  return purged;
}

bool MemoryState::ClaimCronFiring(const std::string& entry, int64_t due_us,
                                  std::vector<Change>& out) {
  auto [it, inserted] = cron_firings_.try_emplace(entry, due_us);
  if (!inserted) {
    if (it->second >= due_us) return false;
    it->second = due_us;
  }
  Change c = LockChange(Change::Kind::kSetCronFiring, entry);
  c.delta = due_us;
  out.push_back(std::move(c));
  return true;
}

}  // namespace bulkhead
