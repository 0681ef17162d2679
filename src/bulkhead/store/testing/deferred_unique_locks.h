// DeferredUniqueLocks: UniqueLocks that answer later (deferred_store.h), over an inner store's.
#pragma once

#include "bulkhead/store/testing/deferred_later.h"
#include "bulkhead/store/unique_locks.h"

namespace bulkhead {

class DeferredUniqueLocks final : public UniqueLocks {
 public:
  DeferredUniqueLocks(UniqueLocks& inner, Later later) : inner_(inner), later_(std::move(later)) {}
  void Push(JobRecord job, const UniqueLock& lock, TimePoint now, Done durable) override {
    inner_.Push(std::move(job), lock, now, later_(std::move(durable)));
  }
  void Release(const std::string& jid, Done durable) override {
    inner_.Release(jid, later_.IfSet(std::move(durable)));
  }

 private:
  UniqueLocks& inner_;
  Later later_;
};

}  // namespace bulkhead
