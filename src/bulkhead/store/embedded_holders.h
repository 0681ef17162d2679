// EmbeddedHolders: HolderStore of the embedded store: MemoryState's holder records (holder_book.h),
// made durable by the change log as records of space "holder".
#pragma once

#include "bulkhead/store/embedded_context.h"
#include "bulkhead/store/holder_store.h"

namespace bulkhead {

class EmbeddedHolders final : public HolderStore {
 public:
  explicit EmbeddedHolders(EmbeddedContext& context) : context_(context) {}
  void Set(const std::string& jid, const std::string& wid, Done durable) override;
  void List(size_t limit, HeldJobsCallback cb) override;

 private:
  EmbeddedContext& context_;
};

}  // namespace bulkhead
