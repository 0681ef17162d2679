#include "bulkhead/encoders/webpush_encryption.h"

#include <openssl/rand.h>

#include <optional>

#include "bulkhead/encoders/openssl_util.h"
#include "bulkhead/encoders/p256.h"
#include "bulkhead/util/base64.h"

namespace bulkhead {
namespace {

using encoders_internal::EvpCipherCtxPtr;
using encoders_internal::HkdfSha256;
using encoders_internal::OpenSslError;

constexpr size_t kTagSize = 16;
constexpr size_t kKeySize = 16;
constexpr size_t kNonceSize = 12;
constexpr size_t kAes128gcmHeaderSize = 16 + 4 + 1 + 65;  // 86

// AES-128-GCM over prefix ‖ data ‖ suffix, appending ciphertext and tag to `out`.
Status SealRecord(const unsigned char* key, const unsigned char* nonce, std::string_view prefix,
                  std::string_view data, std::string_view suffix, std::string& out) {
  EvpCipherCtxPtr ctx(EVP_CIPHER_CTX_new());
  if (!ctx ||
      EVP_EncryptInit_ex2(ctx.get(), encoders_internal::Aes128Gcm(), key, nonce, nullptr) != 1) {
    return Status::Internal(OpenSslError("AES-128-GCM init"));
  }
  size_t start = out.size();
  out.resize(start + prefix.size() + data.size() + suffix.size() + kTagSize);
  auto* p = reinterpret_cast<unsigned char*>(out.data()) + start;
  for (std::string_view part : {prefix, data, suffix}) {
    if (part.empty()) continue;
    int n = 0;
    if (EVP_EncryptUpdate(ctx.get(), p, &n, reinterpret_cast<const unsigned char*>(part.data()),
                          static_cast<int>(part.size())) != 1) {
      return Status::Internal(OpenSslError("AES-128-GCM encrypt"));
    }
    p += n;
  }
  int n = 0;
  if (EVP_EncryptFinal_ex(ctx.get(), p, &n) != 1) {
    return Status::Internal(OpenSslError("AES-128-GCM final"));
  }
  p += n;
  if (EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, kTagSize, p) != 1) {
    return Status::Internal(OpenSslError("AES-128-GCM tag"));
  }
  return Status::Ok();
}

std::string LengthPrefixed(std::string_view key) {
  std::string out;
  out += static_cast<char>((key.size() >> 8) & 0xff);
  out += static_cast<char>(key.size() & 0xff);
  out += key;
  return out;
}

}  // namespace

const char* ContentEncodingName(ContentEncoding encoding) {
  return encoding == ContentEncoding::kAesgcm ? "aesgcm" : "aes128gcm";
}

Result<ContentEncoding> ParseContentEncoding(std::string_view name) {
  if (name == "aes128gcm") return ContentEncoding::kAes128gcm;
  if (name == "aesgcm") return ContentEncoding::kAesgcm;
  return Status::InvalidArgument("content_encoding must be \"aes128gcm\" or \"aesgcm\", got \"" +
                                 std::string(name.substr(0, 32)) + "\"");
}

size_t MaxWebPushPlaintext(ContentEncoding encoding) {
  return encoding == ContentEncoding::kAesgcm ? kAesgcmMaxPlaintext : kAes128gcmMaxPlaintext;
}

Result<WebPushSubscriberKeys> WebPushSubscriberKeys::Parse(std::string_view p256dh_b64url,
                                                           std::string_view auth_b64url) {
  Result<std::string> p256dh = Base64Decode(p256dh_b64url);
  if (!p256dh.ok()) {
    return Status::InvalidArgument("p256dh is not base64url: " + p256dh.status().message());
  }
  Result<std::string> auth = Base64Decode(auth_b64url);
  if (!auth.ok()) {
    return Status::InvalidArgument("auth is not base64url: " + auth.status().message());
  }
  if (auth->size() != kWebPushAuthSecretSize) {
    return Status::InvalidArgument("auth must decode to 16 bytes, got " +
                                   std::to_string(auth->size()));
  }
  Result<encoders_internal::EvpPkeyPtr> key = encoders_internal::P256PublicKeyFromPoint(*p256dh);
  if (!key.ok()) return Status::InvalidArgument("p256dh: " + key.status().message());
  WebPushSubscriberKeys out;
  out.p256dh_ = std::move(*p256dh);
  out.auth_ = std::move(*auth);
  out.key_ = encoders_internal::ShareKey(std::move(*key));
  return out;
}

Result<WebPushSenderKey> WebPushSenderKey::Generate() {
  Result<encoders_internal::EvpPkeyPtr> key = encoders_internal::GenerateP256Key();
  if (!key.ok()) return key.status();
  Result<std::string> pub = encoders_internal::P256PublicPoint(key->get());
  if (!pub.ok()) return pub.status();
  WebPushSenderKey out;
  out.public_key_ = std::move(*pub);
  out.key_ = encoders_internal::ShareKey(std::move(*key));
  return out;
}

Result<WebPushSenderKey> WebPushSenderKey::FromPrivateKey(std::string_view scalar) {
  Result<encoders_internal::EvpPkeyPtr> key = encoders_internal::P256KeyFromPrivateScalar(scalar);
  if (!key.ok()) return key.status();
  Result<std::string> pub = encoders_internal::P256PublicPoint(key->get());
  if (!pub.ok()) return pub.status();
  WebPushSenderKey out;
  out.public_key_ = std::move(*pub);
  out.key_ = encoders_internal::ShareKey(std::move(*key));
  return out;
}

namespace {

// The content-encryption key and nonce of a record.
struct ContentKeys {
  unsigned char cek[kKeySize];
  unsigned char nonce[kNonceSize];
};

// The derivation both encodings share, with their own info strings:
//   IKM = HKDF(auth, ecdh, ikm_info, 32); CEK = HKDF(salt, IKM, cek_info, 16);
//   nonce = HKDF(salt, IKM, nonce_info, 12).
Status DeriveCekAndNonce(std::string_view auth, std::string_view ecdh, std::string_view ikm_info,
                         std::string_view salt, std::string_view cek_info,
                         std::string_view nonce_info, ContentKeys& out) {
  unsigned char ikm[32];
  auto ikm_view = std::string_view(reinterpret_cast<const char*>(ikm), sizeof(ikm));
  Status st = HkdfSha256(auth, ecdh, ikm_info, ikm, sizeof(ikm));
  if (st.ok()) st = HkdfSha256(salt, ikm_view, cek_info, out.cek, sizeof(out.cek));
  if (st.ok()) st = HkdfSha256(salt, ikm_view, nonce_info, out.nonce, sizeof(out.nonce));
  return st;
}

// RFC 8291 (aes128gcm): derives the content key and nonce from `ecdh` and writes the record,
// its header carrying the salt and the sender's public key, to out.body. Reads out.salt.
Status SealAes128gcm(const WebPushSubscriberKeys& keys, const WebPushSenderKey& sender,
                     std::string_view ecdh, std::string_view plaintext, EncryptedPush& out) {
  // RFC 8291 §3.4: IKM info = "WebPush: info\0" ‖ ua_public ‖ as_public.
  std::string key_info("WebPush: info\0", 14);
  key_info += keys.p256dh();
  key_info += sender.public_key();
  ContentKeys k;
  Status st = DeriveCekAndNonce(keys.auth(), ecdh, key_info, out.salt,
                                std::string_view("Content-Encoding: aes128gcm\0", 28),
                                std::string_view("Content-Encoding: nonce\0", 24), k);
  if (!st.ok()) return st;
  out.body.reserve(kAes128gcmHeaderSize + plaintext.size() + 1 + kTagSize);
  out.body.append(out.salt);
  for (int shift = 24; shift >= 0; shift -= 8) {
    out.body += static_cast<char>((kAes128gcmRecordSize >> shift) & 0xff);
  }
  out.body += static_cast<char>(encoders_internal::kP256PointSize);
  out.body += sender.public_key();
  return SealRecord(k.cek, k.nonce, {}, plaintext, std::string_view("\x02", 1), out.body);
}

// draft-ietf-webpush-encryption-04 (aesgcm): derives the content key and nonce from `ecdh`, writes
// the record to out.body and out.salt and out.sender_public_key to the Encryption and Crypto-Key
// headers.
Status SealAesgcm(const WebPushSubscriberKeys& keys, const WebPushSenderKey& sender,
                  std::string_view ecdh, std::string_view plaintext, EncryptedPush& out) {
  // IKM info = "Content-Encoding: auth\0"; the CEK and nonce infos end with the context
  // "P-256\0" ‖ len(ua) ‖ ua_public ‖ len(as) ‖ as_public.
  std::string context("P-256\0", 6);
  context += LengthPrefixed(keys.p256dh());
  context += LengthPrefixed(sender.public_key());
  ContentKeys k;
  Status st = DeriveCekAndNonce(keys.auth(), ecdh, std::string_view("Content-Encoding: auth\0", 23),
                                out.salt, std::string("Content-Encoding: aesgcm\0", 25) + context,
                                std::string("Content-Encoding: nonce\0", 24) + context, k);
  if (!st.ok()) return st;
  out.body.reserve(2 + plaintext.size() + kTagSize);
  st = SealRecord(k.cek, k.nonce, std::string_view("\0\0", 2), plaintext, {}, out.body);
  if (!st.ok()) return st;
  out.headers.emplace_back("Encryption", "salt=" + Base64UrlEncode(out.salt));
  out.headers.emplace_back("Crypto-Key", "dh=" + Base64UrlEncode(out.sender_public_key));
  return Status::Ok();
}

}  // namespace

Result<EncryptedPush> EncryptWebPush(const WebPushSubscriberKeys& keys, std::string_view plaintext,
                                     const WebPushEncryptOptions& options) {
  const ContentEncoding encoding = options.encoding;
  if (plaintext.size() > MaxWebPushPlaintext(encoding)) {
    return Status::InvalidArgument("payload is " + std::to_string(plaintext.size()) + " bytes; " +
                                   ContentEncodingName(encoding) + " allows at most " +
                                   std::to_string(MaxWebPushPlaintext(encoding)));
  }
  EncryptedPush out;
  out.encoding = encoding;
  if (options.salt.empty()) {
    out.salt.resize(kWebPushSaltSize);
    if (RAND_bytes(reinterpret_cast<unsigned char*>(out.salt.data()), kWebPushSaltSize) != 1) {
      return Status::Internal(OpenSslError("RAND_bytes"));
    }
  } else if (options.salt.size() != kWebPushSaltSize) {
    return Status::InvalidArgument("salt must be 16 bytes");
  } else {
    out.salt = options.salt;
  }

  std::optional<WebPushSenderKey> fresh;
  const WebPushSenderKey* sender = options.sender_key;
  if (sender == nullptr) {
    Result<WebPushSenderKey> generated = WebPushSenderKey::Generate();
    if (!generated.ok()) return generated.status();
    fresh = std::move(*generated);
    sender = &*fresh;
  }
  out.sender_public_key = sender->public_key();

  Result<std::string> ecdh = encoders_internal::P256Ecdh(sender->key(), keys.key());
  if (!ecdh.ok()) return ecdh.status();
  Status st = encoding == ContentEncoding::kAes128gcm
                  ? SealAes128gcm(keys, *sender, *ecdh, plaintext, out)
                  : SealAesgcm(keys, *sender, *ecdh, plaintext, out);
  if (!st.ok()) return st;
  return out;
}

Result<EncryptedPush> EncryptWebPush(std::string_view p256dh_b64url, std::string_view auth_b64url,
                                     std::string_view plaintext,
                                     const WebPushEncryptOptions& options) {
  Result<WebPushSubscriberKeys> keys = WebPushSubscriberKeys::Parse(p256dh_b64url, auth_b64url);
  if (!keys.ok()) return keys.status();
  return EncryptWebPush(*keys, plaintext, options);
}

}  // namespace bulkhead
