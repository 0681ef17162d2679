#include "bulkhead/dispatch/key_ring.h"

namespace bulkhead {

void InMemoryKeyRing::Add(std::string key_id, SigningKey key) {
  std::lock_guard lock(mu_);
  keys_.insert_or_assign(std::move(key_id), std::move(key));
}

std::optional<SigningKey> InMemoryKeyRing::Find(std::string_view key_id) const {
  std::lock_guard lock(mu_);
  auto it = keys_.find(key_id);
  if (it == keys_.end()) return std::nullopt;
  return it->second;
}

}  // namespace bulkhead
