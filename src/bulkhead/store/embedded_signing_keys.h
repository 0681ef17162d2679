// EmbeddedSigningKeys: SigningKeyStore of the embedded store: MemoryState's keys, made durable by
// the change log (the signing_keys table on sqlite:).
#pragma once

#include "bulkhead/store/embedded_context.h"
#include "bulkhead/store/signing_key_store.h"

namespace bulkhead {

class EmbeddedSigningKeys final : public SigningKeyStore {
 public:
  explicit EmbeddedSigningKeys(EmbeddedContext& context) : context_(context) {}
  void Put(const std::string& key_id, const std::string& pem, Done durable) override;
  void Remove(const std::string& key_id, Done durable) override;
  void List(SigningKeysCallback cb) override;

 private:
  EmbeddedContext& context_;
};

}  // namespace bulkhead
