#include "bulkhead/store/embedded_batches.h"

namespace bulkhead {

void EmbeddedBatches::New(BatchRecord batch, TimePoint now, Done durable) {
  context_.Apply(std::move(durable), [&](std::vector<Change>& out) {
    return context_.state().CreateBatch(std::move(batch), ToUnixMicros(now), out);
  });
}

void EmbeddedBatches::Get(const std::string& bid, TimePoint now, BatchCallback cb) {
  const BatchRecord* b = context_.state().FindBatch(bid, ToUnixMicros(now));
  cb(b ? std::optional<BatchRecord>(*b) : std::nullopt);
}

void EmbeddedBatches::Commit(const std::string& bid, TimePoint now, Done durable) {
  context_.Apply(std::move(durable), [&](std::vector<Change>& out) {
    return context_.state().CommitBatch(bid, ToUnixMicros(now), out);
  });
}

void EmbeddedBatches::PushMember(JobRecord job, const std::string& bid, TimePoint now,
                                 Done durable) {
  context_.Apply(std::move(durable), [&](std::vector<Change>& out) {
    return context_.state().AddBatchMember(std::move(job), bid, ToUnixMicros(now), out);
  });
}

void EmbeddedBatches::Expire(TimePoint now, size_t limit, CountCallback cb) {
  if (context_.Refused(cb)) return;
  std::vector<Change> changes;
  size_t n = context_.state().ExpireBatches(ToUnixMicros(now), limit, changes);
  context_.Commit(std::move(changes), nullptr);
  cb(n);
}

void EmbeddedBatches::Counts(std::function<void(Result<BatchCounts>)> cb) {
  cb(context_.state().batch_counts());
}

}  // namespace bulkhead
