// KeyRing: the actors' signing keys for ActivityPub deliveries, looked up by the key id a job
// names (the actor's key URI). Jobs never carry key material.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "bulkhead/encoders/http_signature.h"

namespace bulkhead {

// Implementations are thread-safe.
class KeyRing {
 public:
  virtual ~KeyRing() = default;
  // The key registered under `key_id`, or nullopt. The returned SigningKey shares the key.
  virtual std::optional<SigningKey> Find(std::string_view key_id) const = 0;
};

// Keys held in memory only (tests; the server uses StoreKeyRing). Thread-safe.
class InMemoryKeyRing final : public KeyRing {
 public:
  // Adds or replaces the key for `key_id`.
  void Add(std::string key_id, SigningKey key);
  std::optional<SigningKey> Find(std::string_view key_id) const override;

 private:
  mutable std::mutex mu_;
  std::map<std::string, SigningKey, std::less<>> keys_;  // guarded by mu_
};

}  // namespace bulkhead
