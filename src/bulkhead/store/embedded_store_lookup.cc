// EmbeddedStore's jid lookup and reservation holders: MemoryState does the work, the change
// log makes the holders durable (records of space "holder", holder_book.h).
#include "bulkhead/store/embedded_store.h"

namespace bulkhead {

void EmbeddedStore::FindJob(const std::string& jid, JobCallback cb) {
  const JobRecord* job = state_.FindJob(jid);
  cb(job ? std::optional<JobRecord>(*job) : std::nullopt);
}

void EmbeddedStore::SetHolder(const std::string& jid, const std::string& wid, Done durable) {
  if (context_.Refused(durable)) return;
  std::vector<Change> changes;
  state_.SetHolder(jid, wid, changes);
  context_.Commit(std::move(changes), std::move(durable));
}

void EmbeddedStore::ListHeld(size_t limit, HeldJobsCallback cb) {
  std::vector<HeldJob> held;
  for (auto& [job, wid] : state_.ListHeld(limit)) {
    held.push_back(HeldJob{std::move(job), std::move(wid)});
  }
  cb(std::move(held));
}

}  // namespace bulkhead
