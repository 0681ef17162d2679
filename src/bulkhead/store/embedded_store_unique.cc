// EmbeddedStore's unique-job locks and cron firing claims: MemoryState does the work, the
// change log makes it durable.
#include "bulkhead/store/embedded_store.h"

namespace bulkhead {

void EmbeddedStore::PushUnique(JobRecord job, const UniqueLock& lock, TimePoint now, Done durable) {
  if (Status w = Writable(); !w.ok()) return durable(w);
  std::vector<Change> changes;
  Status s = state_.AddUnique(std::move(job), lock.key, ToUnixMicros(lock.until), ToUnixMicros(now),
                              changes);
  if (!s.ok()) return durable(s);
  Commit(std::move(changes), std::move(durable));
}

void EmbeddedStore::ReleaseUniqueLock(const std::string& jid, Done durable) {
  if (Status w = Writable(); !w.ok()) {
    if (durable) durable(w);
    return;
  }
  std::vector<Change> changes;
  state_.ReleaseUniqueOf(jid, changes);
  Commit(std::move(changes), std::move(durable));
}

void EmbeddedStore::ClaimCronFiring(const std::string& entry, TimePoint due,
                                    ClaimCallback durable) {
  if (Status w = Writable(); !w.ok()) return durable(w);
  std::vector<Change> changes;
  bool claimed = state_.ClaimCronFiring(entry, ToUnixMicros(due), changes);
  Commit(std::move(changes), [claimed, durable = std::move(durable)](Status s) {
    if (!s.ok()) return durable(s);
    durable(claimed);
  });
}

void EmbeddedStore::ListCronFirings(CronFiringsCallback cb) {
  std::map<std::string, TimePoint> out;
  for (const auto& [entry, due_us] : state_.cron_firings()) out[entry] = FromUnixMicros(due_us);
  cb(std::move(out));
}

}  // namespace bulkhead
