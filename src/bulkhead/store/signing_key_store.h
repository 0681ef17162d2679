// SigningKeyStore: the store's part for ActivityPub signing keys (Store::signing_keys()). Store's
// contract (store.h) holds for every call.
//
// ActivityPub signing keys (key id -> PEM private key), kept beside the jobs so that they survive
// restarts with them. The store does not interpret the PEM (dispatch/StoreKeyRing validates
// it) and never logs it; List exists for the key registry only. Signing keys are
// configuration, not jobs: FLUSH keeps them.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "bulkhead/store/store_callbacks.h"

namespace bulkhead {

class SigningKeyStore : public StoreCallbacks {
 public:
  virtual ~SigningKeyStore() = default;

  struct StoredSigningKey {
    std::string key_id;
    std::string pem;
  };
  using SigningKeysCallback = std::function<void(Result<std::vector<StoredSigningKey>>)>;
  // Adds or replaces the key for `key_id`.
  virtual void Put(const std::string& key_id, const std::string& pem, Done durable) = 0;
  // Deletes the key for `key_id`; NotFound (and no change) when there is none.
  virtual void Remove(const std::string& key_id, Done durable) = 0;
  // Every stored key, ordered by key id.
  virtual void List(SigningKeysCallback cb) = 0;
};

}  // namespace bulkhead
