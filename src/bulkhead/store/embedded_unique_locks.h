// EmbeddedUniqueLocks: UniqueLocks of the embedded store. MemoryState does the work
// (memory_state_unique.cc), the change log makes it durable.
#pragma once

#include "bulkhead/store/embedded_context.h"
#include "bulkhead/store/unique_locks.h"

namespace bulkhead {

class EmbeddedUniqueLocks final : public UniqueLocks {
 public:
  explicit EmbeddedUniqueLocks(EmbeddedContext& context) : context_(context) {}
  void Push(JobRecord job, const UniqueLock& lock, TimePoint now, Done durable) override;
  void Release(const std::string& jid, Done durable) override;

 private:
  EmbeddedContext& context_;
};

}  // namespace bulkhead
