// DeferredBatches: a BatchStore that answers later (deferred_store.h), over an inner store's.
#pragma once

#include "bulkhead/store/batch_store.h"
#include "bulkhead/store/testing/deferred_later.h"

namespace bulkhead {

class DeferredBatches final : public BatchStore {
 public:
  DeferredBatches(BatchStore& inner, Later later) : inner_(inner), later_(std::move(later)) {}
  void New(BatchRecord batch, TimePoint now, Done durable) override {
    inner_.New(std::move(batch), now, later_(std::move(durable)));
  }
  void Get(const std::string& bid, TimePoint now, BatchCallback cb) override {
    inner_.Get(bid, now, later_(std::move(cb)));
  }
  void Commit(const std::string& bid, TimePoint now, Done durable) override {
    inner_.Commit(bid, now, later_(std::move(durable)));
  }
  void PushMember(JobRecord job, const std::string& bid, TimePoint now, Done durable) override {
    inner_.PushMember(std::move(job), bid, now, later_(std::move(durable)));
  }
  void Expire(TimePoint now, size_t limit, CountCallback cb) override {
    inner_.Expire(now, limit, later_(std::move(cb)));
  }
  void Counts(std::function<void(Result<BatchCounts>)> cb) override {
    inner_.Counts(later_(std::move(cb)));
  }

 private:
  BatchStore& inner_;
  Later later_;
};

}  // namespace bulkhead
