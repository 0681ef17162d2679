#include "bulkhead/dispatch/store_key_ring.h"

#include <openssl/crypto.h>
#include <spdlog/spdlog.h>

#include <memory>

namespace bulkhead {
namespace {

constexpr size_t kMaxKeyIdBytes = 2048;

// Overwrites a string holding key material before it is freed.
void Wipe(std::string& s) {
  if (!s.empty()) OPENSSL_cleanse(s.data(), s.size());
  s.clear();
}

}  // namespace

Status StoreKeyRing::ValidateKeyId(std::string_view key_id) {
  if (key_id.empty()) return Status::InvalidArgument("key id is empty");
  if (key_id.size() > kMaxKeyIdBytes) {
    return Status::InvalidArgument("key id is longer than " + std::to_string(kMaxKeyIdBytes) +
                                   " bytes");
  }
  for (char c : key_id) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      return Status::InvalidArgument("key id contains a control character");
    }
    if (u >= 0x80) {
      return Status::InvalidArgument(
          "key id contains a non-ASCII byte: key ids are URLs, which the Signature header carries "
          "as ASCII (percent-encode other characters)");
    }
    if (c == '"' || c == '\\') {
      return Status::InvalidArgument(
          "key id contains '\"' or '\\', which the Signature header "
          "cannot carry");
    }
  }
  return Status::Ok();
}

Result<StoreKeyRing::Entry> StoreKeyRing::Parse(const std::string& key_id, std::string_view pem) {
  Result<SigningKey> key = SigningKey::FromPem(pem);
  if (!key.ok()) return key.status();
  KeyInfo info;
  info.key_id = key_id;
  info.bits = key->bits();
  info.public_key_pem = key->PublicKeyPem();
  info.fingerprint = key->PublicKeyFingerprint();
  return Entry{std::move(*key), std::move(info)};
}

void StoreKeyRing::Open(Store& store, std::function<void(Status)> done) {
  store_ = &store;
  store.signing_keys().List([this, alive = alive_, done = std::move(done)](
                                Result<std::vector<SigningKeyStore::StoredSigningKey>> keys) {
    if (!*alive) return;
    if (!keys.ok()) {
      spdlog::error("cannot load the signing keys: {}", keys.status().message());
      done(keys.status());
      return;
    }
    Load(std::move(*keys));
    done(Status::Ok());
  });
}

void StoreKeyRing::Load(std::vector<SigningKeyStore::StoredSigningKey> keys) {
  std::map<std::string, Entry, std::less<>> loaded;
  for (auto& stored : keys) {
    Result<Entry> entry = Parse(stored.key_id, stored.pem);
    Wipe(stored.pem);
    if (!entry.ok()) {
      spdlog::warn("skipping stored signing key {}: {}", stored.key_id, entry.status().message());
      continue;
    }
    loaded.insert_or_assign(stored.key_id, std::move(*entry));
  }
  spdlog::info("loaded {} ActivityPub signing keys", loaded.size());
  std::lock_guard lock(mu_);
  keys_ = std::move(loaded);
}

void StoreKeyRing::Add(std::string key_id, std::string pem, AddDone done) {
  Status valid = ValidateKeyId(key_id);
  if (!valid.ok()) {
    Wipe(pem);
    done(valid);
    return;
  }
  Result<Entry> entry = Parse(key_id, pem);
  if (!entry.ok()) {
    Wipe(pem);
    done(entry.status());
    return;
  }
  if (!store_) {
    Wipe(pem);
    done(Status::FailedPrecondition("the key ring is not open"));
    return;
  }
  auto parsed = std::make_shared<Entry>(std::move(*entry));
  store_->signing_keys().Put(
      key_id, pem, [this, alive = alive_, parsed, done = std::move(done)](Status s) {
        if (!*alive) return;
        if (!s.ok()) {
          done(Status(s.code(), "storing signing key " + parsed->info.key_id + ": " + s.message()));
          return;
        }
        AddResult result{parsed->info, false};
        {
          std::lock_guard lock(mu_);
          result.created = keys_.insert_or_assign(parsed->info.key_id, *parsed).second;
        }
        spdlog::info("signing key {} {} ({} bits, {})", result.key.key_id,
                     result.created ? "added" : "replaced", result.key.bits,
                     result.key.fingerprint);
        done(std::move(result));
      });
  Wipe(pem);
}

void StoreKeyRing::Remove(const std::string& key_id, std::function<void(Status)> done) {
  if (!store_) {
    done(Status::FailedPrecondition("the key ring is not open"));
    return;
  }
  store_->signing_keys().Remove(key_id,
                                [this, alive = alive_, key_id, done = std::move(done)](Status s) {
                                  if (!*alive) return;
                                  if (s.ok()) {
                                    {
                                      std::lock_guard lock(mu_);
                                      keys_.erase(key_id);
                                    }
                                    spdlog::info("signing key {} removed", key_id);
                                  }
                                  done(s);
                                });
}

std::vector<StoreKeyRing::KeyInfo> StoreKeyRing::List() const {
  std::lock_guard lock(mu_);
  std::vector<KeyInfo> out;
  out.reserve(keys_.size());
  for (const auto& [id, entry] : keys_) out.push_back(entry.info);
  return out;
}

std::optional<StoreKeyRing::KeyInfo> StoreKeyRing::Describe(std::string_view key_id) const {
  std::lock_guard lock(mu_);
  auto it = keys_.find(key_id);
  if (it == keys_.end()) return std::nullopt;
  return it->second.info;
}

std::optional<SigningKey> StoreKeyRing::Find(std::string_view key_id) const {
  std::lock_guard lock(mu_);
  auto it = keys_.find(key_id);
  if (it == keys_.end()) return std::nullopt;
  return it->second.key;
}

}  // namespace bulkhead
