// MemoryState's jid lookup and reservation holders (contracts in store.h and memory_state.h).
#include "bulkhead/store/memory_state.h"

namespace bulkhead {

const JobRecord* MemoryState::FindJob(const std::string& jid) const {
  auto it = by_jid_.find(jid);
  return it == by_jid_.end() ? nullptr : &it->second->job;
}

bool MemoryState::IsWorking(const std::string& jid) const {
  const JobRecord* job = FindJob(jid);
  return job != nullptr && job->state == JobState::kWorking;
}

void MemoryState::SetHolder(const std::string& jid, const std::string& wid,
                            std::vector<Change>& out) {
  if (!IsWorking(jid)) return;
  holders_.Set(jid, wid, out);
}

std::vector<std::pair<JobRecord, std::string>> MemoryState::ListHeld(size_t limit) const {
  std::vector<std::pair<JobRecord, std::string>> held;
  for (const auto& [jid, wid] : holders_.entries()) {
    if (held.size() >= limit) break;
    const JobRecord* job = FindJob(jid);
    if (job && job->state == JobState::kWorking) held.emplace_back(*job, wid);
  }
  return held;
}

}  // namespace bulkhead
