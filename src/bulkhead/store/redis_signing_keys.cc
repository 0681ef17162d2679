#include "bulkhead/store/redis_signing_keys.h"

#include "bulkhead/store/redis_store_scripts.h"

namespace bulkhead {

void RedisSigningKeys::Put(const std::string& key_id, const std::string& pem, Done durable) {
  calls_.Command("put_signing_key", {"HSET", calls_.key_prefix() + "keys", key_id, pem},
                 OkOr(std::move(durable)));
}

void RedisSigningKeys::Remove(const std::string& key_id, Done durable) {
  calls_.Command(
      "remove_signing_key", {"HDEL", calls_.key_prefix() + "keys", key_id},
      [key_id, durable = std::move(durable)](Result<RedisReply> r) {
        if (!r.ok()) return durable(r.status());
        if (r->integer() == 0) {
          return durable(Status::NotFound("no signing key is registered for \"" + key_id + "\""));
        }
        durable(Status::Ok());
      });
}

void RedisSigningKeys::List(SigningKeysCallback cb) {
  calls_.Command("list_signing_keys", {"HGETALL", calls_.key_prefix() + "keys"},
                 [cb = std::move(cb)](Result<RedisReply> r) {
                   if (!r.ok()) return cb(r.status());
                   std::vector<StoredSigningKey> keys;
                   for (auto& [id, pem] : SortedPairs(*r)) keys.push_back({id, pem});
                   cb(std::move(keys));
                 });
}

}  // namespace bulkhead
