// EmbeddedBatches: BatchStore of the embedded store. MemoryState's BatchBook does the work
// (batch_book.h), the change log makes it durable.
#pragma once

#include "bulkhead/store/batch_store.h"
#include "bulkhead/store/embedded_context.h"

namespace bulkhead {

class EmbeddedBatches final : public BatchStore {
 public:
  explicit EmbeddedBatches(EmbeddedContext& context) : context_(context) {}
  void New(BatchRecord batch, TimePoint now, Done durable) override;
  void Get(const std::string& bid, TimePoint now, BatchCallback cb) override;
  void Commit(const std::string& bid, TimePoint now, Done durable) override;
  void PushMember(JobRecord job, const std::string& bid, TimePoint now, Done durable) override;
  void Expire(TimePoint now, size_t limit, CountCallback cb) override;
  void Counts(std::function<void(Result<BatchCounts>)> cb) override;

 private:
  EmbeddedContext& context_;
};

}  // namespace bulkhead
