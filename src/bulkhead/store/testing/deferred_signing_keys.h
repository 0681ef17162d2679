// DeferredSigningKeys: a SigningKeyStore that answers later (deferred_store.h), over an inner
// store's.
#pragma once

#include "bulkhead/store/signing_key_store.h"
#include "bulkhead/store/testing/deferred_later.h"

namespace bulkhead {

class DeferredSigningKeys final : public SigningKeyStore {
 public:
  DeferredSigningKeys(SigningKeyStore& inner, Later later)
      : inner_(inner), later_(std::move(later)) {}
  void Put(const std::string& key_id, const std::string& pem, Done durable) override {
    inner_.Put(key_id, pem, later_(std::move(durable)));
  }
  void Remove(const std::string& key_id, Done durable) override {
    inner_.Remove(key_id, later_(std::move(durable)));
  }
  void List(SigningKeysCallback cb) override { inner_.List(later_(std::move(cb))); }

 private:
  SigningKeyStore& inner_;
  Later later_;
};

}  // namespace bulkhead
