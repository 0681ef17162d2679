// VAPID (RFC 8292): the application server's P-256 identity key and the ES256 JWTs that prove it
// to push services.
//
//   Authorization: vapid t=<JWT>,k=<base64url uncompressed public key>      (aes128gcm, RFC 8292)
//   Authorization: WebPush <JWT> + Crypto-Key: p256ecdsa=<key>              (legacy aesgcm)
//
// JWT = base64url({"typ":"JWT","alg":"ES256"}) . base64url({"aud":<origin>,"exp":<unix s>,
// "sub":<contact>}) . base64url(R‖S), the signature in JOSE's raw 64-byte form (not DER).
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "bulkhead/util/clock.h"
#include "bulkhead/util/status.h"

typedef struct evp_pkey_st EVP_PKEY;

namespace bulkhead {

// What VapidKey::FromBase64Url's errors call the two halves (e.g. Mastodon's variable names).
struct VapidKeyNames {
  std::string_view private_key = "VAPID private key";
  std::string_view public_key = "VAPID public key";
};

// A VAPID key pair. Immutable after creation; copies share the key; safe to use from several
// threads. The private key is never turned into a string a caller could log: the only way it
// leaves the object is SaveFile().
class VapidKey {
 public:
  static Result<VapidKey> Generate();
  // A PEM private key ("PRIVATE KEY" PKCS#8 or "EC PRIVATE KEY" SEC1) that must be on P-256.
  static Result<VapidKey> FromPem(std::string_view pem);
  // Reads FromPem's input from a file. NotFound / PermissionDenied when it cannot be read.
  static Result<VapidKey> LoadFile(const std::string& path);
  // The raw forms Mastodon's VAPID_PRIVATE_KEY / VAPID_PUBLIC_KEY settings hold (Ruby's
  // Base64.urlsafe_encode64 of the private scalar and of the uncompressed public point): base64url
  // or standard base64, `=`-padded or not; the scalar big-endian, 32 bytes or shorter when its
  // leading bytes are zero (Ruby's OpenSSL::BN#to_s(2) drops them; down to 30 bytes accepted, as
  // shorter is almost surely a truncated value). The public point is optional; when given it must
  // be the private key's. InvalidArgument names the half and the problem, never the key.
  static Result<VapidKey> FromBase64Url(std::string_view private_key_b64url,
                                        std::string_view public_key_b64url = {},
                                        const VapidKeyNames& names = VapidKeyNames());

  // Writes the private key as PKCS#8 PEM. The file is written under a temporary name created with
  // mode 0600 and renamed over `path`, so readers never see a partial or world-readable key.
  Status SaveFile(const std::string& path) const;

  // The uncompressed public point: raw 65 bytes, and base64url without padding (the `k=` value
  // and the applicationServerKey browsers subscribe with).
  const std::string& public_key() const { return public_key_; }
  const std::string& public_key_b64url() const { return public_key_b64url_; }
  // The public key as Mastodon's VAPID_PUBLIC_KEY holds it: base64url with `=` padding (88
  // characters), for an operator to compare with the application's setting.
  std::string PublicKeyMastodonForm() const;

  // ES256: ECDSA P-256 over SHA-256(data); returns the raw 64-byte R‖S signature.
  Result<std::string> SignEs256(std::string_view data) const;

 private:
  VapidKey() = default;
  static Result<VapidKey> FromPkey(std::shared_ptr<EVP_PKEY> key);
  std::shared_ptr<EVP_PKEY> key_;
  std::string public_key_;
  std::string public_key_b64url_;
};

struct VapidSignerOptions {
  // exp = now (whole seconds) + token_lifetime. Must be in [2 min, 12 h]; push services refuse
  // exp more than 24 h ahead and 12 h leaves room for clock skew (npm web-push's default).
  std::chrono::seconds token_lifetime = std::chrono::hours(12);
  // A cached token is reused until `refresh_before` ahead of its exp. Must be in
  // [1 min, token_lifetime).
  std::chrono::seconds refresh_before = std::chrono::hours(1);
  // false: sign a new token on every call (for benchmarks and comparisons).
  bool cache = true;
  // Cache bound; when full, expired entries are dropped, then the whole cache if still full.
  size_t max_cached_audiences = 1024;
};

// Signs VAPID JWTs for push-service audiences, caching one token per audience until it nears
// expiry. Thread-safe: callers on many threads may share one signer; the cache is guarded by a
// mutex and signing happens outside it. `clock` must outlive the signer.
class VapidSigner {
 public:
  // subject: the operator contact, "mailto:<address>" or "https://<url>". InvalidArgument for a
  // bad subject or options.
  static Result<std::unique_ptr<VapidSigner>> Create(VapidKey key, std::string subject,
                                                     const Clock& clock,
                                                     VapidSignerOptions options = {});

  VapidSigner(const VapidSigner&) = delete;
  VapidSigner& operator=(const VapidSigner&) = delete;

  // The JWT for `audience`, which must be an origin: "https://host[:port]" (http allowed, no
  // path). InvalidArgument otherwise.
  Result<std::string> Token(std::string_view audience);
  // "vapid t=<JWT>,k=<public key>" (RFC 8292 §3).
  Result<std::string> AuthorizationHeader(std::string_view audience);

  const VapidKey& key() const { return key_; }
  const std::string& subject() const { return subject_; }
  // How many tokens have been signed (cache misses); for tests and stats.
  uint64_t tokens_signed() const;

 private:
  struct Entry {
    std::string token;
    TimePoint refresh_at;
  };
  VapidSigner(VapidKey key, std::string subject, const Clock& clock, VapidSignerOptions options);
  Result<std::string> SignToken(const std::string& audience, TimePoint now);

  // Constant after construction.
  const VapidKey key_;
  const std::string subject_;
  const Clock& clock_;
  const VapidSignerOptions options_;
  const std::string header_b64_;

  // Protected by mu_.
  mutable std::mutex mu_;
  std::unordered_map<std::string, Entry> cache_;
  uint64_t tokens_signed_ = 0;
};

}  // namespace bulkhead
