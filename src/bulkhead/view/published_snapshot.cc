#include "bulkhead/view/published_snapshot.h"

namespace bulkhead {

void PublishedSnapshot::Publish(EngineSnapshot snapshot) {
  auto next = std::make_shared<const EngineSnapshot>(std::move(snapshot));
  std::lock_guard lock(mu_);
  latest_.swap(next);  // the old copy is freed outside the lock, with `next`
}

std::shared_ptr<const EngineSnapshot> PublishedSnapshot::Latest() const {
  std::lock_guard lock(mu_);
  return latest_;
}

}  // namespace bulkhead
