// Web Push message encryption (RFC 8291) in the two content codings push services accept:
//
//  * aes128gcm (RFC 8188 + RFC 8291, the standard): body = salt(16) ‖ rs(4, big-endian, 4096) ‖
//    idlen(1) = 65 ‖ sender public key(65) ‖ AES-128-GCM(plaintext ‖ 0x02) ‖ tag(16). One record.
//    Plaintext limit kAes128gcmMaxPlaintext = 3993 bytes (4096-byte body, RFC 8291 §4).
//
//  * aesgcm (draft-ietf-webpush-encryption-04 / draft-ietf-httpbis-encryption-encoding-03, still
//    Mastodon's default): body = AES-128-GCM(0x0000 ‖ plaintext) ‖ tag(16); the salt and the
//    sender's public key travel in the headers "Encryption: salt=<b64url>" and
//    "Crypto-Key: dh=<b64url>". One record of at most 4096 bytes; plaintext limit
//    kAesgcmMaxPlaintext = 4078 bytes (4096 − 2 padding-length bytes − 16 tag bytes), the same
//    4096-byte body ceiling push services enforce for aes128gcm.
//
// Every message uses a fresh ephemeral P-256 key pair and a fresh 16-byte salt from OpenSSL's
// CSPRNG; both can be injected for known-answer tests (never reuse them in production).
// All functions are thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "bulkhead/encoders/header_list.h"
#include "bulkhead/util/status.h"

typedef struct evp_pkey_st EVP_PKEY;

namespace bulkhead {

enum class ContentEncoding { kAes128gcm, kAesgcm };

// "aes128gcm" / "aesgcm": the Content-Encoding header value.
const char* ContentEncodingName(ContentEncoding encoding);
// Inverse of ContentEncodingName (exact, lowercase). InvalidArgument names the bad value.
Result<ContentEncoding> ParseContentEncoding(std::string_view name);

inline constexpr size_t kAes128gcmMaxPlaintext = 3993;
inline constexpr size_t kAesgcmMaxPlaintext = 4078;
inline constexpr uint32_t kAes128gcmRecordSize = 4096;
inline constexpr size_t kWebPushSaltSize = 16;
inline constexpr size_t kWebPushAuthSecretSize = 16;

// The largest plaintext `encoding` accepts, in bytes.
size_t MaxWebPushPlaintext(ContentEncoding encoding);

// A subscription's keys, decoded and validated. Immutable; cheap to copy (the parsed key is
// shared); safe to use from several threads.
class WebPushSubscriberKeys {
 public:
  // p256dh: base64url (padding optional) of a 65-byte uncompressed P-256 point on the curve;
  // auth: base64url of exactly 16 bytes. InvalidArgument says which key is bad and why.
  static Result<WebPushSubscriberKeys> Parse(std::string_view p256dh_b64url,
                                             std::string_view auth_b64url);

  const std::string& p256dh() const { return p256dh_; }  // 65 raw bytes
  const std::string& auth() const { return auth_; }      // 16 raw bytes
  EVP_PKEY* key() const { return key_.get(); }

 private:
  WebPushSubscriberKeys() = default;
  std::string p256dh_;
  std::string auth_;
  std::shared_ptr<EVP_PKEY> key_;
};

// The application server's ephemeral ECDH key pair. Normally generated per message inside
// EncryptWebPush; tests build one from a known private key. Has no way to print the private key.
class WebPushSenderKey {
 public:
  static Result<WebPushSenderKey> Generate();
  // From a raw 32-byte big-endian private scalar.
  static Result<WebPushSenderKey> FromPrivateKey(std::string_view scalar);

  const std::string& public_key() const { return public_key_; }  // 65 raw bytes
  EVP_PKEY* key() const { return key_.get(); }

 private:
  WebPushSenderKey() = default;
  std::string public_key_;
  std::shared_ptr<EVP_PKEY> key_;
};

struct WebPushEncryptOptions {
  ContentEncoding encoding = ContentEncoding::kAes128gcm;
  // Test seams. When null/empty a fresh key pair / 16 random bytes are used. A salt, when given,
  // must be exactly 16 bytes.
  const WebPushSenderKey* sender_key = nullptr;
  std::string salt;
};

struct EncryptedPush {
  ContentEncoding encoding = ContentEncoding::kAes128gcm;
  std::string body;               // the HTTP request body
  std::string salt;               // 16 raw bytes
  std::string sender_public_key;  // 65 raw bytes
  // Headers this coding needs besides Content-Encoding, in send order. Empty for aes128gcm; for
  // aesgcm "Encryption: salt=<b64url>" then "Crypto-Key: dh=<b64url>" (a VAPID sender appends
  // ";p256ecdsa=<key>" to Crypto-Key).
  HeaderList headers;
};

// Encrypts `plaintext` for the subscriber. InvalidArgument when the plaintext is longer than
// MaxWebPushPlaintext(options.encoding) or an injected salt is not 16 bytes; Internal on OpenSSL
// failure.
Result<EncryptedPush> EncryptWebPush(const WebPushSubscriberKeys& keys, std::string_view plaintext,
                                     const WebPushEncryptOptions& options = {});

// Convenience: Parse the keys, then encrypt.
Result<EncryptedPush> EncryptWebPush(std::string_view p256dh_b64url, std::string_view auth_b64url,
                                     std::string_view plaintext,
                                     const WebPushEncryptOptions& options = {});

}  // namespace bulkhead
