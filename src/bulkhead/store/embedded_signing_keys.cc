#include "bulkhead/store/embedded_signing_keys.h"

namespace bulkhead {

void EmbeddedSigningKeys::Put(const std::string& key_id, const std::string& pem, Done durable) {
  context_.Apply(std::move(durable), [&](std::vector<Change>& out) {
    context_.state().PutSigningKey(key_id, pem, out);
    return Status::Ok();
  });
}

void EmbeddedSigningKeys::Remove(const std::string& key_id, Done durable) {
  context_.Apply(std::move(durable), [&](std::vector<Change>& out) {
    if (context_.state().RemoveSigningKey(key_id, out)) return Status::Ok();
    return Status::NotFound("no signing key is registered for \"" + key_id + "\"");
  });
}

void EmbeddedSigningKeys::List(SigningKeysCallback cb) {
  const auto& stored = context_.state().signing_keys();
  std::vector<StoredSigningKey> keys;
  keys.reserve(stored.size());
  for (const auto& [key_id, pem] : stored) keys.push_back({key_id, pem});
  cb(std::move(keys));
}

}  // namespace bulkhead
