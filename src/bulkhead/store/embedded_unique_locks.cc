#include "bulkhead/store/embedded_unique_locks.h"

namespace bulkhead {

void EmbeddedUniqueLocks::Push(JobRecord job, const UniqueLock& lock, TimePoint now, Done durable) {
  context_.Apply(std::move(durable), [&](std::vector<Change>& out) {
    return context_.state().AddUnique(std::move(job), lock.key, ToUnixMicros(lock.until),
                                      ToUnixMicros(now), out);
  });
}

void EmbeddedUniqueLocks::Release(const std::string& jid, Done durable) {
  context_.Apply(std::move(durable), [&](std::vector<Change>& out) {
    context_.state().ReleaseUniqueOf(jid, out);
    return Status::Ok();
  });
}

}  // namespace bulkhead
