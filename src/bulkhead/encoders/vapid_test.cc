#include "bulkhead/encoders/vapid.h"

#include <gtest/gtest.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/pem.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <vector>

#include "bulkhead/encoders/openssl_util.h"
#include "bulkhead/encoders/p256.h"
#include "bulkhead/encoders/testing/string_form.h"
#include "bulkhead/util/base64.h"

namespace bulkhead {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

struct Jwt {
  nlohmann::json header;
  nlohmann::json claims;
  std::string signing_input;
  std::string signature;  // raw R‖S
};

Jwt SplitJwt(const std::string& token) {
  Jwt out;
  size_t a = token.find('.');
  size_t b = token.rfind('.');
  EXPECT_NE(a, b);
  out.header = nlohmann::json::parse(*Base64Decode(token.substr(0, a)));
  out.claims = nlohmann::json::parse(*Base64Decode(token.substr(a + 1, b - a - 1)));
  out.signing_input = token.substr(0, b);
  out.signature = *Base64Decode(token.substr(b + 1));
  return out;
}

// Verifies a raw R‖S ES256 signature with OpenSSL, independent of the signer's code path.
bool VerifyEs256(const std::string& public_point, const std::string& data, const std::string& raw) {
  auto key = encoders_internal::P256PublicKeyFromPoint(public_point);
  auto der = encoders_internal::EcdsaRawToDer(raw);
  if (!key.ok() || !der.ok()) return false;
  encoders_internal::EvpMdCtxPtr ctx(EVP_MD_CTX_new());
  if (EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key->get()) != 1)
    return false;
  return EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(der->data()),
                          der->size(), reinterpret_cast<const unsigned char*>(data.data()),
                          data.size()) == 1;
}

class VapidTest : public ::testing::Test {
 protected:
  VapidKey NewKey() {
    Result<VapidKey> key = VapidKey::Generate();
    EXPECT_TRUE(key.ok());
    return *key;
  }
  ManualClock clock_{FromUnixMicros(1'800'000'000'000'000)};  // 2027-01-15T08:00:00Z
};

TEST_F(VapidTest, GeneratedKeyHasUncompressedPublicPoint) {
  VapidKey key = NewKey();
  ASSERT_EQ(key.public_key().size(), 65u);
  EXPECT_EQ(key.public_key()[0], '\x04');
  EXPECT_EQ(key.public_key_b64url(), Base64UrlEncode(key.public_key()));
  EXPECT_EQ(key.public_key_b64url().size(), 87u);
}

TEST_F(VapidTest, JwtHasExpectedHeaderClaimsAndVerifies) {
  VapidKey key = NewKey();
  auto signer = VapidSigner::Create(key, "mailto:admin@example.com", clock_);
  ASSERT_TRUE(signer.ok()) << signer.status().ToString();
  Result<std::string> header = (*signer)->AuthorizationHeader("https://fcm.googleapis.com");
  ASSERT_TRUE(header.ok()) << header.status().ToString();
  const std::string prefix = "vapid t=";
  ASSERT_EQ(header->rfind(prefix, 0), 0u);
  size_t k = header->find(",k=");
  ASSERT_NE(k, std::string::npos);
  EXPECT_EQ(header->substr(k + 3), key.public_key_b64url());
  std::string token = header->substr(prefix.size(), k - prefix.size());

  Jwt jwt = SplitJwt(token);
  EXPECT_EQ(token.substr(0, token.find('.')), Base64UrlEncode(R"({"typ":"JWT","alg":"ES256"})"));
  EXPECT_EQ(jwt.header, nlohmann::json::parse(R"({"typ":"JWT","alg":"ES256"})"));
  EXPECT_EQ(jwt.claims["aud"], "https://fcm.googleapis.com");
  EXPECT_EQ(jwt.claims["sub"], "mailto:admin@example.com");
  EXPECT_EQ(jwt.claims["exp"].get<int64_t>(), 1'800'000'000 + 12 * 3600);
  ASSERT_EQ(jwt.signature.size(), 64u);
  EXPECT_TRUE(VerifyEs256(key.public_key(), jwt.signing_input, jwt.signature));
  EXPECT_FALSE(VerifyEs256(key.public_key(), jwt.signing_input + "x", jwt.signature));
  EXPECT_FALSE(VerifyEs256(NewKey().public_key(), jwt.signing_input, jwt.signature));
}

TEST_F(VapidTest, CachesPerAudienceUntilNearExpiry) {
  auto signer = VapidSigner::Create(NewKey(), "https://example.com/contact", clock_);
  ASSERT_TRUE(signer.ok());
  VapidSigner& s = **signer;
  std::string a1 = *s.Token("https://fcm.googleapis.com");
  std::string b1 = *s.Token("https://updates.push.services.mozilla.com");
  EXPECT_NE(a1, b1);
  EXPECT_EQ(s.tokens_signed(), 2u);

  clock_.Advance(hours(11) - seconds(1));
  EXPECT_EQ(*s.Token("https://fcm.googleapis.com"), a1);
  EXPECT_EQ(s.tokens_signed(), 2u);

  clock_.Advance(seconds(1));  // exactly exp − refresh_before (1 h): re-sign
  std::string a2 = *s.Token("https://fcm.googleapis.com");
  EXPECT_NE(a2, a1);
  EXPECT_EQ(SplitJwt(a2).claims["exp"].get<int64_t>(), 1'800'000'000 + 11 * 3600 + 12 * 3600);
  EXPECT_EQ(s.tokens_signed(), 3u);
  EXPECT_EQ(*s.Token("https://fcm.googleapis.com"), a2);
  EXPECT_EQ(s.tokens_signed(), 3u);
}

TEST_F(VapidTest, CacheOffSignsEveryTime) {
  VapidSignerOptions options;
  options.cache = false;
  auto signer = VapidSigner::Create(NewKey(), "mailto:a@b.example", clock_, options);
  ASSERT_TRUE(signer.ok());
  (*signer)->Token("https://push.example");
  (*signer)->Token("https://push.example");
  EXPECT_EQ((*signer)->tokens_signed(), 2u);
}

TEST_F(VapidTest, CacheIsBounded) {
  VapidSignerOptions options;
  options.max_cached_audiences = 2;
  auto signer = VapidSigner::Create(NewKey(), "mailto:a@b.example", clock_, options);
  ASSERT_TRUE(signer.ok());
  VapidSigner& s = **signer;
  s.Token("https://a.example");
  s.Token("https://b.example");
  s.Token("https://c.example");  // full: cache cleared, then c inserted
  EXPECT_EQ(s.tokens_signed(), 3u);
  s.Token("https://c.example");
  EXPECT_EQ(s.tokens_signed(), 3u);
  s.Token("https://a.example");
  EXPECT_EQ(s.tokens_signed(), 4u);
}

TEST_F(VapidTest, CustomLifetimeAndPortInAudience) {
  VapidSignerOptions options;
  options.token_lifetime = hours(1);
  options.refresh_before = minutes(5);
  auto signer = VapidSigner::Create(NewKey(), "mailto:a@b.example", clock_, options);
  ASSERT_TRUE(signer.ok());
  Jwt jwt = SplitJwt(*(*signer)->Token("https://push.example:8443"));
  EXPECT_EQ(jwt.claims["aud"], "https://push.example:8443");
  EXPECT_EQ(jwt.claims["exp"].get<int64_t>(), 1'800'000'000 + 3600);
}

TEST_F(VapidTest, RefusesBadSubjectOptionsAndAudience) {
  EXPECT_FALSE(VapidSigner::Create(NewKey(), "admin@example.com", clock_).ok());
  EXPECT_FALSE(VapidSigner::Create(NewKey(), "http://example.com", clock_).ok());
  EXPECT_FALSE(VapidSigner::Create(NewKey(), "mailto:", clock_).ok());
  VapidSignerOptions too_long;
  too_long.token_lifetime = hours(13);
  EXPECT_FALSE(VapidSigner::Create(NewKey(), "mailto:a@b.example", clock_, too_long).ok());
  VapidSignerOptions bad_refresh;
  bad_refresh.refresh_before = hours(12);
  EXPECT_FALSE(VapidSigner::Create(NewKey(), "mailto:a@b.example", clock_, bad_refresh).ok());

  auto signer = VapidSigner::Create(NewKey(), "mailto:a@b.example", clock_);
  ASSERT_TRUE(signer.ok());
  EXPECT_FALSE((*signer)->Token("https://fcm.googleapis.com/fcm/send/abc").ok());
  EXPECT_FALSE((*signer)->Token("fcm.googleapis.com").ok());
  EXPECT_FALSE((*signer)->Token("https://FCM.googleapis.com").ok());
}

TEST_F(VapidTest, SaveAndLoadPemWithPrivateFileMode) {
  VapidKey key = NewKey();
  std::string dir = ::testing::TempDir() + "/vapid_test_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::string path = dir + "/vapid.pem";
  ASSERT_TRUE(key.SaveFile(path).ok());
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str().rfind("-----BEGIN PRIVATE KEY-----", 0), 0u);

  Result<VapidKey> loaded = VapidKey::LoadFile(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->public_key(), key.public_key());
  // A signature made with the loaded key verifies with the original public key.
  Result<std::string> sig = loaded->SignEs256("hello");
  ASSERT_TRUE(sig.ok());
  EXPECT_TRUE(VerifyEs256(key.public_key(), "hello", *sig));

  // Overwriting keeps the mode private.
  ASSERT_TRUE(NewKey().SaveFile(path).ok());
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);
  std::filesystem::remove_all(dir);
}

TEST_F(VapidTest, LoadFileErrors) {
  EXPECT_EQ(VapidKey::LoadFile("/nonexistent/vapid.pem").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(VapidKey::FromPem("not a pem").status().code(), StatusCode::kInvalidArgument);
  // An RSA key is refused.
  EVP_PKEY* rsa = EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", size_t{2048});
  ASSERT_NE(rsa, nullptr);
  encoders_internal::BioPtr bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PrivateKey(bio.get(), rsa, nullptr, nullptr, 0, nullptr, nullptr);
  EVP_PKEY_free(rsa);
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);
  auto refused = VapidKey::FromPem(std::string_view(data, len));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("P-256"), std::string::npos);
}

TEST_F(VapidTest, FromBase64UrlMatchesRfc8291ApplicationServerKey) {
  // The RFC 8291 Appendix A application server key pair doubles as a known raw key.
  constexpr char kPrivate[] = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw";
  constexpr char kPublic[] =
      "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8";
  Result<VapidKey> key = VapidKey::FromBase64Url(kPrivate, kPublic);
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  EXPECT_EQ(key->public_key_b64url(), kPublic);
  EXPECT_FALSE(VapidKey::FromBase64Url(kPrivate, NewKey().public_key_b64url()).ok());
  EXPECT_FALSE(VapidKey::FromBase64Url("AAAA").ok());
}

// A pair as Mastodon writes it (lib/tasks/mastodon.rake → the webpush gem's VapidKey): Ruby's
// Base64.urlsafe_encode64 (padded) of OpenSSL::BN#to_s(2) of the private scalar — 31 bytes here,
// its leading zero byte dropped — and of the uncompressed public point. Generated for this test
// only (Node's crypto, a scalar with a leading zero byte); kMastodonPem is the same key as PKCS#8.
constexpr char kMastodonPrivate[] = "XbYDni16aOCDzlqiQzKwN5Gbe9-8rx-lmgOUBY-A1w==";
constexpr char kMastodonPublic[] =
    "BHLWOVoCus4gsxUKZigP_qOs3RYO_2pZcffGRq9n1BiAfVKodRiXh5UyipiNjbpkCIDh8FFbqwdykC_nNkPEneU=";
constexpr char kMastodonPrivate32[] =
    "AF22A54temjgg85aokMysDeRm3vfvK8fpZoDlAWPgNc";  // npm web-push
constexpr char kMastodonPem[] = R"(-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgAF22A54temjgg85a
okMysDeRm3vfvK8fpZoDlAWPgNehRANCAARy1jlaArrOILMVCmYoD/6jrN0WDv9q
WXH3xkavZ9QYgH1SqHUYl4eVMoqYjY26ZAiA4fBRW6sHcpAv5zZDxJ3l
-----END PRIVATE KEY-----
)";

TEST_F(VapidTest, ImportsMastodonsFormIncludingAShortPaddedScalar) {
  Result<VapidKey> pem = VapidKey::FromPem(kMastodonPem);
  ASSERT_TRUE(pem.ok());
  for (const char* priv : {kMastodonPrivate, kMastodonPrivate32}) {
    for (std::string_view pub : {std::string_view(kMastodonPublic), std::string_view()}) {
      Result<VapidKey> key = VapidKey::FromBase64Url(priv, pub);
      ASSERT_TRUE(key.ok()) << key.status().ToString();
      EXPECT_EQ(key->public_key(), pem->public_key()) << priv;
      EXPECT_EQ(key->public_key_b64url() + "=", kMastodonPublic);
      EXPECT_EQ(key->PublicKeyMastodonForm(), kMastodonPublic);
      // It signs as that key: the signature verifies with the public point Mastodon publishes.
      Result<std::string> sig = key->SignEs256("data");
      ASSERT_TRUE(sig.ok());
      EXPECT_TRUE(VerifyEs256(*Base64Decode(kMastodonPublic), "data", *sig));
    }
  }
}

// Fresh pairs written the way Ruby writes them, some with short scalars (one in 256 has a leading
// zero byte: enough draws to see several).
TEST_F(VapidTest, ImportsFreshPairsInRubysEncoding) {
  auto ruby = [](std::string_view bytes) {
    std::string b64 = Base64Encode(bytes);
    for (char& c : b64) c = c == '+' ? '-' : c == '/' ? '_' : c;
    return b64;
  };
  int short_scalars = 0;
  for (int i = 0; i < 2000 && short_scalars < 3; ++i) {
    encoders_internal::EvpPkeyPtr pkey(EVP_EC_gen("P-256"));
    ASSERT_TRUE(pkey);
    BIGNUM* d = nullptr;
    ASSERT_EQ(EVP_PKEY_get_bn_param(pkey.get(), OSSL_PKEY_PARAM_PRIV_KEY, &d), 1);
    std::string scalar(static_cast<size_t>(BN_num_bytes(d)), '\0');
    BN_bn2bin(d, reinterpret_cast<unsigned char*>(scalar.data()));  // minimal, as BN#to_s(2)
    BN_clear_free(d);
    short_scalars += scalar.size() < 32;
    std::string point = *encoders_internal::P256PublicPoint(pkey.get());
    Result<VapidKey> key = VapidKey::FromBase64Url(ruby(scalar), ruby(point));
    ASSERT_TRUE(key.ok()) << key.status().ToString() << " (" << scalar.size() << " bytes)";
    EXPECT_EQ(key->public_key(), point);
  }
  EXPECT_GE(short_scalars, 1) << "no short scalar drawn";
}

TEST_F(VapidTest, RefusesBadMastodonKeysNamingWhy) {
  const VapidKeyNames names{"VAPID_PRIVATE_KEY", "VAPID_PUBLIC_KEY"};
  auto error = [&](std::string_view priv, std::string_view pub) {
    Result<VapidKey> key = VapidKey::FromBase64Url(priv, pub, names);
    EXPECT_FALSE(key.ok());
    EXPECT_EQ(key.status().code(), StatusCode::kInvalidArgument);
    return key.status().message();
  };
  EXPECT_EQ(error(kMastodonPrivate, NewKey().PublicKeyMastodonForm()),
            "VAPID_PUBLIC_KEY is not the public key of VAPID_PRIVATE_KEY");
  EXPECT_EQ(error("not*base64", ""),
            "VAPID_PRIVATE_KEY is not base64url (invalid base64: unexpected character at offset "
            "3)");
  EXPECT_EQ(error(kMastodonPrivate, "BHLW!A"),
            "VAPID_PUBLIC_KEY is not base64url (invalid base64: unexpected character at offset 4)");
  EXPECT_EQ(error("AAAA", ""), "VAPID_PRIVATE_KEY is not a P-256 private key: 3 bytes, must be 32");
  EXPECT_EQ(error(Base64UrlEncode(std::string(33, '\x01')), ""),
            "VAPID_PRIVATE_KEY is not a P-256 private key: 33 bytes, must be 32");
  const std::string invalid =
      "VAPID_PRIVATE_KEY is not a valid P-256 private key (zero, or not below the curve order)";
  EXPECT_EQ(error(Base64UrlEncode(std::string(32, '\0')), ""), invalid);
  EXPECT_EQ(error(Base64UrlEncode(std::string(32, '\xff')), ""), invalid);
  // The order n of P-256 itself.
  EXPECT_EQ(error("_____wAAAAD__________7zm-q2nF56E87nKwvxjJVE", ""), invalid);
  EXPECT_EQ(
      error(kMastodonPrivate, Base64UrlEncode(std::string(64, '\x04'))),
      "VAPID_PUBLIC_KEY is not a P-256 public key: P-256 public key must be 65 bytes, got 64");
  std::string off_curve(65, '\x01');
  off_curve[0] = '\x04';
  EXPECT_EQ(error(kMastodonPrivate, Base64UrlEncode(off_curve))
                .rfind("VAPID_PUBLIC_KEY is not a P-256 public key: ", 0),
            0u);
  // No message carries key material.
  for (std::string_view pub : {std::string_view(kMastodonPublic), std::string_view("x")}) {
    std::string message = error(std::string(kMastodonPrivate) + "!", pub);
    EXPECT_EQ(message.find("XbYDni"), std::string::npos) << message;
  }
}

TEST_F(VapidTest, ConcurrentCallersShareTheCache) {
  VapidKey key = NewKey();
  auto signer = VapidSigner::Create(key, "mailto:a@b.example", clock_);
  ASSERT_TRUE(signer.ok());
  const std::vector<std::string> audiences = {"https://a.example", "https://b.example",
                                              "https://c.example"};
  std::vector<std::vector<std::string>> tokens(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 60; ++i) {
        tokens[t].push_back(*(*signer)->Token(audiences[i % audiences.size()]));
      }
    });
  }
  for (auto& th : threads) th.join();
  // Racing misses may sign an audience more than once, but never more than once per thread.
  EXPECT_GE((*signer)->tokens_signed(), 3u);
  EXPECT_LE((*signer)->tokens_signed(), 12u);
  for (const auto& per_thread : tokens) {
    for (size_t i = 0; i < per_thread.size(); i += 17) {
      Jwt jwt = SplitJwt(per_thread[i]);
      EXPECT_EQ(jwt.claims["aud"], audiences[i % audiences.size()]);
      EXPECT_TRUE(VerifyEs256(key.public_key(), jwt.signing_input, jwt.signature));
    }
  }
}

// The private key has no string form: no ToString, no operator<<.
static_assert(!testing::HasStringForm<VapidKey>);
static_assert(!testing::HasStringForm<VapidSigner>);

}  // namespace
}  // namespace bulkhead
