// ActivityPub delivery signing: HTTP Signatures as draft-cavage-http-signatures-12 describes and
// Mastodon implements (app/lib/request.rb), algorithm rsa-sha256.
//
// For a delivery the headers produced are, in order:
//   Host: <host[:port]>
//   Date: <IMF-fixdate, e.g. "Fri, 15 Jan 2027 08:00:00 GMT">
//   Digest: SHA-256=<base64 of SHA-256(body)>
//   Content-Type: <content type>
//   [the caller's extra headers, e.g. Collection-Synchronization: <value>]
//   Signature: keyId="<key id>",algorithm="rsa-sha256",
//              headers="(request-target) host date digest content-type[ <extra names>]",
//              signature="<base64>"
// where the signature is RSASSA-PKCS1-v1_5 with SHA-256 over the signing string
//   "(request-target): post /inbox\nhost: …\ndate: …\ndigest: SHA-256=…\ncontent-type: …"
//   [+ "\ncollection-synchronization: …" for each extra header]
// ((request-target) = lowercase method, space, path and query as in the URL). Mastodon signs every
// header it sends but User-Agent and Accept-Encoding, so a follower-synchronisation delivery signs
// `(request-target) host date digest content-type collection-synchronization`.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "bulkhead/encoders/header_list.h"
#include "bulkhead/util/clock.h"
#include "bulkhead/util/status.h"

typedef struct evp_pkey_st EVP_PKEY;

namespace bulkhead {

// An actor's RSA private key. Immutable; copies share the key; safe to use from several threads.
// There is deliberately no way to turn the private key into a string.
class SigningKey {
 public:
  // An unencrypted PEM RSA private key ("PRIVATE KEY" or "RSA PRIVATE KEY"), at least 2048 bits.
  // InvalidArgument otherwise, naming the problem (not PEM, encrypted, a public key or certificate,
  // not RSA, too small); the message never contains key material.
  static Result<SigningKey> FromPem(std::string_view pem);
  // FromPem on a file's contents. NotFound / PermissionDenied when it cannot be read.
  static Result<SigningKey> LoadFile(const std::string& path);
  // A fresh RSA key (for tests and first-run setup).
  static Result<SigningKey> Generate(int bits = 2048);

  // The public half as SPKI PEM ("-----BEGIN PUBLIC KEY-----"), as actor documents publish it.
  std::string PublicKeyPem() const;
  int bits() const;
  // "SHA256:" + unpadded base64 of SHA-256 over the DER SubjectPublicKeyInfo (the bytes of
  // PublicKeyPem()), in the style of `ssh-keygen -l`; identifies the key without revealing it.
  std::string PublicKeyFingerprint() const;

  // RSASSA-PKCS1-v1_5 with SHA-256; raw signature bytes.
  Result<std::string> SignRsaSha256(std::string_view data) const;

 private:
  SigningKey() = default;
  std::shared_ptr<EVP_PKEY> key_;
};

// The signed header list, for building and for tests (extra headers' names follow it).
inline constexpr char kDeliverySignedHeaders[] = "(request-target) host date digest content-type";
// What ActivityPub deliveries are sent as.
inline constexpr char kActivityJsonContentType[] = "application/activity+json";

// IMF-fixdate (RFC 9110 §5.6.7): "Sun, 06 Nov 1994 08:49:37 GMT"; sub-second part dropped.
std::string FormatImfFixdate(TimePoint t);

// "SHA-256=<base64 of SHA-256(body)>" (RFC 3230 Digest header value).
std::string DigestHeaderValue(std::string_view body);

// Signs a delivery request. `url` must be an absolute http(s) URL; `key_id` is the actor's key URI
// (it must not contain '"', '\\' or control characters). `extra` headers are sent and signed after
// Content-Type, in their order; their names must be tokens other than the ones above. Returns the
// headers listed above, to be sent together with the body unchanged. InvalidArgument for a bad
// URL, method, key id or extra header.
Result<HeaderList> SignHttpRequest(std::string_view method, std::string_view url,
                                   std::string_view body, std::string_view key_id,
                                   const SigningKey& key, const Clock& clock,
                                   std::string_view content_type = kActivityJsonContentType,
                                   const HeaderList& extra = {});

}  // namespace bulkhead
