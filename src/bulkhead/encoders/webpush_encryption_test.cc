#include "bulkhead/encoders/webpush_encryption.h"

#include <gtest/gtest.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>

#include "bulkhead/encoders/openssl_util.h"
#include "bulkhead/encoders/p256.h"
#include "bulkhead/util/base64.h"

namespace bulkhead {
namespace {

using encoders_internal::HkdfSha256;

// RFC 8291 Appendix A, copied from https://www.rfc-editor.org/rfc/rfc8291#appendix-A.
constexpr char kRfcPlaintext[] = "When I grow up, I want to be a watermelon";
constexpr char kRfcAsPrivate[] = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw";
constexpr char kRfcAsPublic[] =
    "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8";
constexpr char kRfcUaPrivate[] = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94";
constexpr char kRfcUaPublic[] =
    "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4";
constexpr char kRfcAuth[] = "BTBZMqHH6r4Tts7J_aSIgg";
constexpr char kRfcSalt[] = "DGv6ra1nlYgDCS1FRnbzlw";
constexpr char kRfcEcdhSecret[] = "kyrL1jIIOHEzg3sM2ZWRHDRB62YACZhhSlknJ672kSs";
constexpr char kRfcBody[] =
    "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAm"
    "S6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_"
    "Qulcy4a-fN";

std::string Dec(std::string_view b64) {
  Result<std::string> r = Base64Decode(b64);
  EXPECT_TRUE(r.ok()) << b64;
  return r.ok() ? *r : std::string();
}

// Test-only AES-128-GCM open of ciphertext ‖ tag.
std::optional<std::string> Open(const std::string& key, const std::string& nonce,
                                std::string_view sealed) {
  if (sealed.size() < 16) return std::nullopt;
  encoders_internal::EvpCipherCtxPtr ctx(EVP_CIPHER_CTX_new());
  EVP_DecryptInit_ex2(ctx.get(), EVP_aes_128_gcm(),
                      reinterpret_cast<const unsigned char*>(key.data()),
                      reinterpret_cast<const unsigned char*>(nonce.data()), nullptr);
  std::string out(sealed.size() - 16, '\0');
  int n = 0;
  EVP_DecryptUpdate(ctx.get(), reinterpret_cast<unsigned char*>(out.data()), &n,
                    reinterpret_cast<const unsigned char*>(sealed.data()),
                    static_cast<int>(out.size()));
  std::string tag(sealed.substr(out.size()));
  EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, 16, tag.data());
  int m = 0;
  if (EVP_DecryptFinal_ex(ctx.get(), reinterpret_cast<unsigned char*>(out.data()) + n, &m) != 1) {
    return std::nullopt;
  }
  return out;
}

std::string Hkdf(std::string_view salt, std::string_view ikm, std::string_view info, size_t n) {
  std::string out(n, '\0');
  EXPECT_TRUE(HkdfSha256(salt, ikm, info, reinterpret_cast<unsigned char*>(out.data()), n).ok());
  return out;
}

// Test-only receiver for aesgcm: the user agent's half of draft-ietf-webpush-encryption-04.
std::optional<std::string> DecryptAesgcm(const EncryptedPush& push, std::string_view ua_private,
                                         std::string_view auth) {
  auto ua = encoders_internal::P256KeyFromPrivateScalar(ua_private);
  auto as = encoders_internal::P256PublicKeyFromPoint(push.sender_public_key);
  if (!ua.ok() || !as.ok()) return std::nullopt;
  std::string ua_pub = *encoders_internal::P256PublicPoint(ua->get());
  std::string secret = *encoders_internal::P256Ecdh(ua->get(), as->get());
  std::string ikm = Hkdf(auth, secret, std::string_view("Content-Encoding: auth\0", 23), 32);
  std::string context("P-256\0\0\x41", 8);
  context += ua_pub;
  context += std::string("\0\x41", 2) + push.sender_public_key;
  std::string cek =
      Hkdf(push.salt, ikm, std::string("Content-Encoding: aesgcm\0", 25) + context, 16);
  std::string nonce =
      Hkdf(push.salt, ikm, std::string("Content-Encoding: nonce\0", 24) + context, 12);
  std::optional<std::string> padded = Open(cek, nonce, push.body);
  if (!padded || padded->size() < 2) return std::nullopt;
  size_t pad =
      (static_cast<unsigned char>((*padded)[0]) << 8) | static_cast<unsigned char>((*padded)[1]);
  return padded->substr(2 + pad);
}

// Test-only receiver for aes128gcm (RFC 8291 §3.4 + RFC 8188), one record.
std::optional<std::string> DecryptAes128gcm(std::string_view body, std::string_view ua_private,
                                            std::string_view auth) {
  if (body.size() < 86 + 17) return std::nullopt;
  std::string salt(body.substr(0, 16));
  if (static_cast<unsigned char>(body[20]) != 65) return std::nullopt;
  std::string as_pub(body.substr(21, 65));
  auto ua = encoders_internal::P256KeyFromPrivateScalar(ua_private);
  auto as = encoders_internal::P256PublicKeyFromPoint(as_pub);
  if (!ua.ok() || !as.ok()) return std::nullopt;
  std::string ua_pub = *encoders_internal::P256PublicPoint(ua->get());
  std::string secret = *encoders_internal::P256Ecdh(ua->get(), as->get());
  std::string ikm = Hkdf(auth, secret, std::string("WebPush: info\0", 14) + ua_pub + as_pub, 32);
  std::string cek = Hkdf(salt, ikm, std::string_view("Content-Encoding: aes128gcm\0", 28), 16);
  std::string nonce = Hkdf(salt, ikm, std::string_view("Content-Encoding: nonce\0", 24), 12);
  std::optional<std::string> padded = Open(cek, nonce, body.substr(86));
  if (!padded) return std::nullopt;
  size_t end = padded->find_last_not_of('\0');
  if (end == std::string::npos || (*padded)[end] != '\x02') return std::nullopt;
  return padded->substr(0, end);
}

TEST(WebPushEncryptionTest, Rfc8291AppendixAKnownAnswer) {
  Result<WebPushSenderKey> sender = WebPushSenderKey::FromPrivateKey(Dec(kRfcAsPrivate));
  ASSERT_TRUE(sender.ok()) << sender.status().ToString();
  EXPECT_EQ(Base64UrlEncode(sender->public_key()), kRfcAsPublic);

  WebPushEncryptOptions options;
  options.sender_key = &*sender;
  options.salt = Dec(kRfcSalt);
  Result<EncryptedPush> push = EncryptWebPush(kRfcUaPublic, kRfcAuth, kRfcPlaintext, options);
  ASSERT_TRUE(push.ok()) << push.status().ToString();
  EXPECT_EQ(Base64UrlEncode(push->body), kRfcBody);
  EXPECT_EQ(push->body.size(), 86u + 41u + 1u + 16u);
  EXPECT_TRUE(push->headers.empty());
  EXPECT_EQ(push->sender_public_key, sender->public_key());
}

TEST(WebPushEncryptionTest, Rfc8291EcdhSecretIntermediate) {
  auto as = encoders_internal::P256KeyFromPrivateScalar(Dec(kRfcAsPrivate));
  auto ua = encoders_internal::P256PublicKeyFromPoint(Dec(kRfcUaPublic));
  ASSERT_TRUE(as.ok() && ua.ok());
  EXPECT_EQ(Base64UrlEncode(*encoders_internal::P256Ecdh(as->get(), ua->get())), kRfcEcdhSecret);
}

TEST(WebPushEncryptionTest, Aes128gcmRoundTripsWithRandomKeyAndSalt) {
  std::string plaintext(kAes128gcmMaxPlaintext, 'x');
  Result<EncryptedPush> a = EncryptWebPush(kRfcUaPublic, kRfcAuth, plaintext);
  Result<EncryptedPush> b = EncryptWebPush(kRfcUaPublic, kRfcAuth, plaintext);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->body.size(), 4096u);
  EXPECT_NE(a->salt, b->salt);
  EXPECT_NE(a->sender_public_key, b->sender_public_key);
  EXPECT_EQ(DecryptAes128gcm(a->body, Dec(kRfcUaPrivate), Dec(kRfcAuth)), plaintext);
}

TEST(WebPushEncryptionTest, AesgcmRoundTripAndHeaders) {
  WebPushEncryptOptions options;
  options.encoding = ContentEncoding::kAesgcm;
  for (size_t size : {size_t{0}, size_t{1}, size_t{200}, kAesgcmMaxPlaintext}) {
    std::string plaintext(size, 'q');
    Result<EncryptedPush> push = EncryptWebPush(kRfcUaPublic, kRfcAuth, plaintext, options);
    ASSERT_TRUE(push.ok()) << push.status().ToString();
    EXPECT_EQ(push->body.size(), size + 2 + 16);
    ASSERT_EQ(push->headers.size(), 2u);
    EXPECT_EQ(push->headers[0].first, "Encryption");
    EXPECT_EQ(push->headers[0].second, "salt=" + Base64UrlEncode(push->salt));
    EXPECT_EQ(push->headers[1].first, "Crypto-Key");
    EXPECT_EQ(push->headers[1].second, "dh=" + Base64UrlEncode(push->sender_public_key));
    EXPECT_EQ(DecryptAesgcm(*push, Dec(kRfcUaPrivate), Dec(kRfcAuth)), plaintext);
  }
}

TEST(WebPushEncryptionTest, AesgcmIsDeterministicWithInjectedKeyAndSalt) {
  Result<WebPushSenderKey> sender = WebPushSenderKey::FromPrivateKey(Dec(kRfcAsPrivate));
  ASSERT_TRUE(sender.ok());
  WebPushEncryptOptions options;
  options.encoding = ContentEncoding::kAesgcm;
  options.sender_key = &*sender;
  options.salt = Dec(kRfcSalt);
  auto a = EncryptWebPush(kRfcUaPublic, kRfcAuth, kRfcPlaintext, options);
  auto b = EncryptWebPush(kRfcUaPublic, kRfcAuth, kRfcPlaintext, options);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->body, b->body);
  EXPECT_EQ(a->headers[0].second, std::string("salt=") + kRfcSalt);
  EXPECT_EQ(a->headers[1].second, std::string("dh=") + kRfcAsPublic);
}

TEST(WebPushEncryptionTest, TamperedCiphertextFailsToOpen) {
  auto push = EncryptWebPush(kRfcUaPublic, kRfcAuth, "hello");
  ASSERT_TRUE(push.ok());
  std::string body = push->body;
  body[90] ^= 1;
  EXPECT_EQ(DecryptAes128gcm(body, Dec(kRfcUaPrivate), Dec(kRfcAuth)), std::nullopt);
}

TEST(WebPushEncryptionTest, RefusesPayloadOverTheLimit) {
  auto too_big =
      EncryptWebPush(kRfcUaPublic, kRfcAuth, std::string(kAes128gcmMaxPlaintext + 1, 'x'));
  ASSERT_FALSE(too_big.ok());
  EXPECT_EQ(too_big.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(too_big.status().message().find("at most 3993"), std::string::npos);
  WebPushEncryptOptions legacy;
  legacy.encoding = ContentEncoding::kAesgcm;
  auto legacy_too_big =
      EncryptWebPush(kRfcUaPublic, kRfcAuth, std::string(kAesgcmMaxPlaintext + 1, 'x'), legacy);
  ASSERT_FALSE(legacy_too_big.ok());
  EXPECT_NE(legacy_too_big.status().message().find("at most 4078"), std::string::npos);
}

TEST(WebPushEncryptionTest, RefusesBadKeysWithClearMessages) {
  auto bad_b64 = WebPushSubscriberKeys::Parse("BCVx*sr7N", kRfcAuth);
  ASSERT_FALSE(bad_b64.ok());
  EXPECT_NE(bad_b64.status().message().find("p256dh is not base64url"), std::string::npos);

  auto short_key = WebPushSubscriberKeys::Parse(Base64UrlEncode(std::string(64, '\x04')), kRfcAuth);
  ASSERT_FALSE(short_key.ok());
  EXPECT_NE(short_key.status().message().find("65 bytes"), std::string::npos);

  std::string compressed = Dec(kRfcUaPublic);
  compressed[0] = 0x02;
  auto not_uncompressed = WebPushSubscriberKeys::Parse(Base64UrlEncode(compressed), kRfcAuth);
  ASSERT_FALSE(not_uncompressed.ok());
  EXPECT_NE(not_uncompressed.status().message().find("uncompressed"), std::string::npos);

  std::string off_curve = Dec(kRfcUaPublic);
  off_curve[64] ^= 1;
  auto not_on_curve = WebPushSubscriberKeys::Parse(Base64UrlEncode(off_curve), kRfcAuth);
  ASSERT_FALSE(not_on_curve.ok());
  EXPECT_NE(not_on_curve.status().message().find("not a point on the curve"), std::string::npos)
      << not_on_curve.status().message();

  auto bad_auth = WebPushSubscriberKeys::Parse(kRfcUaPublic, Base64UrlEncode(std::string(15, 'a')));
  ASSERT_FALSE(bad_auth.ok());
  EXPECT_NE(bad_auth.status().message().find("auth must decode to 16 bytes, got 15"),
            std::string::npos);

  auto bad_auth_b64 = WebPushSubscriberKeys::Parse(kRfcUaPublic, "!!!");
  ASSERT_FALSE(bad_auth_b64.ok());
  EXPECT_NE(bad_auth_b64.status().message().find("auth is not base64url"), std::string::npos);

  WebPushEncryptOptions bad_salt;
  bad_salt.salt = "short";
  EXPECT_FALSE(EncryptWebPush(kRfcUaPublic, kRfcAuth, "x", bad_salt).ok());
}

TEST(WebPushEncryptionTest, ContentEncodingNames) {
  EXPECT_STREQ(ContentEncodingName(ContentEncoding::kAes128gcm), "aes128gcm");
  EXPECT_STREQ(ContentEncodingName(ContentEncoding::kAesgcm), "aesgcm");
  EXPECT_EQ(*ParseContentEncoding("aesgcm"), ContentEncoding::kAesgcm);
  EXPECT_EQ(*ParseContentEncoding("aes128gcm"), ContentEncoding::kAes128gcm);
  EXPECT_FALSE(ParseContentEncoding("AES128GCM").ok());
}

}  // namespace
}  // namespace bulkhead
