// StoreKeyRing: the ActivityPub signing keys, kept in the Store (so they survive restarts with
// the jobs) and held parsed in memory for Find.
//
// Thread-safety: Find and List may be called from any thread. Open, Add and Remove call the Store
// and so run on the event loop thread only. Lifetime: the store passed to Open must outlive the
// registry's last Add/Remove; answers arriving after the registry is destroyed are dropped (their
// `done` does not run).
//
// A key becomes visible to Find once the store has made it durable, so a PUSH naming it can never
// be accepted while the key could still be lost in a crash. Removing a key does not touch jobs
// already queued for it: their delivery fails for want of the key ("delivery dead").
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bulkhead/dispatch/key_ring.h"
#include "bulkhead/encoders/http_signature.h"
#include "bulkhead/store/store.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

class StoreKeyRing final : public KeyRing {
 public:
  // What may be shown about a key: never the private half.
  struct KeyInfo {
    std::string key_id;
    int bits = 0;
    std::string public_key_pem;  // SPKI PEM, as the actor document publishes it
    std::string fingerprint;     // SigningKey::PublicKeyFingerprint()
  };
  struct AddResult {
    KeyInfo key;
    bool created = false;  // false: an existing key was replaced
  };
  using AddDone = std::function<void(Result<AddResult>)>;

  StoreKeyRing() = default;
  ~StoreKeyRing() override { *alive_ = false; }
  StoreKeyRing(const StoreKeyRing&) = delete;
  StoreKeyRing& operator=(const StoreKeyRing&) = delete;

  // Attaches the registry to `store` and loads every stored key, then runs `done` with the
  // store's error, if any (possibly inside this call; never after the registry is destroyed).
  // Call once, before anything else, and use the registry (Find, List, Add, Remove) only after
  // `done`: until then it holds no key. A stored key that no longer parses is skipped with a
  // warning naming its key id.
  void Open(Store& store, std::function<void(Status)> done);

  // Validates `key_id` (ValidateKeyId) and `pem` (an unencrypted PEM RSA private key of at least
  // 2048 bits, SigningKey::FromPem), then stores it, replacing any key of that id. `done` gets
  // InvalidArgument naming the problem (without key material), the store's error, or the key's
  // public description once it is durable and visible to Find. The PEM is wiped from `pem`'s buffer
  // after use.
  void Add(std::string key_id, std::string pem, AddDone done);
  // Deletes the key; `done` gets NotFound when there is none, OK once the removal is durable.
  void Remove(const std::string& key_id, std::function<void(Status)> done);
  // Every key, ordered by key id.
  std::vector<KeyInfo> List() const;
  // The key of `key_id`, if any.
  std::optional<KeyInfo> Describe(std::string_view key_id) const;

  std::optional<SigningKey> Find(std::string_view key_id) const override;

  // A key id is what jobs name in `key_id` and what goes into the Signature header's keyId: 1 to
  // 2048 bytes, no control characters, no '"' or '\'. InvalidArgument naming the problem.
  static Status ValidateKeyId(std::string_view key_id);

 private:
  struct Entry {
    SigningKey key;
    KeyInfo info;
  };
  static Result<Entry> Parse(const std::string& key_id, std::string_view pem);
  void Load(std::vector<SigningKeyStore::StoredSigningKey> keys);

  Store* store_ = nullptr;                                      // set by Open
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // false once destroyed
  mutable std::mutex mu_;
  std::map<std::string, Entry, std::less<>> keys_;  // guarded by mu_
};

}  // namespace bulkhead
