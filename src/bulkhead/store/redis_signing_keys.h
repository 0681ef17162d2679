// RedisSigningKeys: SigningKeyStore of the Redis store: the hash {NS}:keys (key id -> PEM), one
// plain command per call (HSET, HDEL, HGETALL).
#pragma once

#include "bulkhead/store/redis_calls.h"
#include "bulkhead/store/signing_key_store.h"

namespace bulkhead {

class RedisSigningKeys final : public SigningKeyStore {
 public:
  explicit RedisSigningKeys(RedisCalls& calls) : calls_(calls) {}
  void Put(const std::string& key_id, const std::string& pem, Done durable) override;
  void Remove(const std::string& key_id, Done durable) override;
  void List(SigningKeysCallback cb) override;

 private:
  RedisCalls& calls_;
};

}  // namespace bulkhead
