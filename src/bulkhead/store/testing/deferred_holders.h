// DeferredHolders: a HolderStore that answers later (deferred_store.h), over an inner store's.
#pragma once

#include "bulkhead/store/holder_store.h"
#include "bulkhead/store/testing/deferred_later.h"

namespace bulkhead {

class DeferredHolders final : public HolderStore {
 public:
  DeferredHolders(HolderStore& inner, Later later) : inner_(inner), later_(std::move(later)) {}
  void Set(const std::string& jid, const std::string& wid, Done durable) override {
    inner_.Set(jid, wid, later_(std::move(durable)));
  }
  void List(size_t limit, HeldJobsCallback cb) override {
    inner_.List(limit, later_(std::move(cb)));
  }

 private:
  HolderStore& inner_;
  Later later_;
};

}  // namespace bulkhead
