#include "bulkhead/encoders/http_signature.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "bulkhead/encoders/node_tool_test_util.h"
#include "bulkhead/encoders/openssl_util.h"
#include "bulkhead/encoders/testing/string_form.h"
#include "bulkhead/util/base64.h"

namespace bulkhead {
namespace {

using nlohmann::json;

// A 2048-bit RSA key generated for this test only (openssl genpkey).
constexpr char kTestKeyPem[] = R"(-----BEGIN PRIVATE KEY-----
MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQCJLJCcmFhbtso4
QdEiy13mxAeQnwT1uvdfAEDQO5mYlBIKNruD7XYZJeLxAv5fiTG0r25Os4DRZVBt
GyF0K5OSiVIkFMyuuEsta7mMESTCn9M1PAep98KxKm4FucFofILjB0mhnMmIxyEQ
ip4GoxCmvjxeooc5mK6HVClEWkrH/EzMWSRXWXWQdujkzc4kDSICu2TChawj8VyB
MW2mPPK/ldZIBZrHaXZ7vgHTVLfGd0FuVJoCJUWR0x1fQLrLMYd/tnprVEFkecpR
1yYZW6831Q7HVo7PAfrbIqT3WdTfSbQnP0LOCz1l7eZ1DLC7UUeOaWhsmUPLOx/b
f6EqQElHAgMBAAECggEAPsTyw4V+4TDqpgWQEpDmviMzpvztQxiz+3fdMKwlI8mV
27Ch68Osh+NrToflKIhaA2lHW6IOL0NiIxsIGuWZ2LMXsEUISGcyl2008aAipyCF
gFWg2Cj0oSdeQyZ2Fz7qkcKS8e4R1pHwUmZr23OgufxRGajbogJ40pozbAC5OXtR
kG1Up1dhbtfntx9WnESoR56hcrOzX1btBWSW0yk2Lt9GcQdFh3a9jh0G7btz0KPr
1AmvdereOG7IY0jHTjc8PtJpw3Os45xUlOnO9We1HM8bbtIxXRu1plJVwfBpmg64
YTLWv97OV6FwcaRr8BIqnoIeKpE/xia21kjPkFe/aQKBgQC+DO+GvGyiON2ppt1u
mQeUF9n8s3E4CDn1Y4frcq2MK3kPkZUGbZNK/zoo3jJ2uKAR/M/uATDibhHgDo9a
Ho6g8Pqa+4wDmFS9BUAZvhocgBClTC2RjRWtgeFEpnBSoGHP5EPOTYhYh7M2AmSM
LY2AoMhU9bOaTo1snd0JF9lvawKBgQC4xl7kpf8hMVxk9K/mS2N8JGiSf9Y2q8Z1
QhCgkVdoN4NzO2Obm/L/UenBY/Nve6xG7XabqxeSyaKnp0J+EvD0P+Ku37Vj1V7r
QyDYTs3mTW9nY+j0qKIWlBSM822JomDkbK5WTW7SroMlZ7+UNwzrjWzt92j3jt/E
QQKSHuNQlQKBgHqL9sunplj4WB50BaayMIvS0XI79w6NZ2oO8u7kdHnE8nwSgMiz
UV3zs3n0xQ9+v2C55w3uYKoxFX+ng9I1j/zBRqc2+rK6wDFeOFYhGc802QbtVxja
o5bNAAf3VshAuLGH3B0kK34CipGR+2nUWcEOa/80q8odSt418PhTE5bfAoGBAKhz
WKF03/H/0S7Mj+wQwKK1goxEdSMkWOofj48C0b/WFEWiV/3OH6s6nzPKjm0NP5Lt
+9qREQ2mO15CsvDDDd5uu5cXpYNdS4qJiVEKDtYttCl6wS8C6bpRx6Z0amE2osS8
e/d74lO5+x/HxLU3ttSr+ym7C3vdSgzeA5z5Ad09AoGAb4OoxlO/9pABwmuf2r9c
uwH5g3Yzb/kIL1VACFTXWwaWLQnmBYqum4TMJ8geLzwhAtSDyvwMG0I/hHaPSgH9
15v3mwCwFsNkho2K4qaRWWGxnsWbmUQdgAvxl0GfuR/TamL2T7k2f23hw3kPoTIa
lS4SArRuSMpEFF6caZPsOXQ=
-----END PRIVATE KEY-----
)";

// openssl dgst -sha256 -sign <kTestKeyPem> over kExpectedSigningString, base64: an independent
// computation of the exact signature (RSASSA-PKCS1-v1_5 is deterministic).
constexpr char kExpectedSignature[] =
    "QELn5lzseey3wZzu+Q6umL7FezBaGN08hB/"
    "D5h+J2EVtn9ajrKzYrvUfTaM9kaNmpYF5vzqI+GF8MmRSSOHDagUDaZTJrvc4LnFDxkqiSOdG9IcCasO/"
    "ATk8d8ixb803hW0N6TlrKP1hd3ejc5czAymckFIL0mhmjI9ZyOL8JSE6djaOhpMyNz94zpL0/"
    "hFdS4U7pCUgAvVgcOog1JuS07QYZjBQnaNGQU2tEztVXuxqleNStsVgrPeiBHNivmZkaMLrbYpVYP1jnAAAG2DWMAvmrIr"
    "+pr7s7WA7pbo5NoGsSror5SW4l/GrNINRUzc2fl5iGx4diHoFOMG5uXFLbg==";

constexpr char kBody[] = R"({"type":"Create"})";
constexpr char kUrl[] = "https://social.example:8443/users/alice/inbox?x=1";
constexpr char kKeyId[] = "https://bulkhead.example/users/bob#main-key";
constexpr char kExpectedSigningString[] =
    "(request-target): post /users/alice/inbox?x=1\n"
    "host: social.example:8443\n"
    "date: Fri, 15 Jan 2027 08:00:00 GMT\n"
    "digest: SHA-256=JeE18werLvQnEoHViKDam+ZK1D8E27TBC2kIISI7pIY=\n"
    "content-type: application/activity+json";

bool VerifyRsaSha256(const std::string& public_pem, std::string_view data,
                     const std::string& signature) {
  encoders_internal::BioPtr bio(
      BIO_new_mem_buf(public_pem.data(), static_cast<int>(public_pem.size())));
  encoders_internal::EvpPkeyPtr key(PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr));
  if (!key) return false;
  encoders_internal::EvpMdCtxPtr ctx(EVP_MD_CTX_new());
  if (EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key.get()) != 1) return false;
  return EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(signature.data()),
                          signature.size(), reinterpret_cast<const unsigned char*>(data.data()),
                          data.size()) == 1;
}

std::string SignatureParam(const std::string& header, const std::string& name) {
  std::string needle = name + "=\"";
  size_t start = header.find(needle);
  if (start == std::string::npos) return {};
  start += needle.size();
  return header.substr(start, header.find('"', start) - start);
}

class HttpSignatureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<SigningKey> key = SigningKey::FromPem(kTestKeyPem);
    ASSERT_TRUE(key.ok()) << key.status().ToString();
    key_ = std::make_unique<SigningKey>(*key);
  }
  ManualClock clock_{
      FromUnixMicros(1'800'000'000'123'456)};  // Fri, 15 Jan 2027 08:00:00.123456 GMT
  std::unique_ptr<SigningKey> key_;
};

TEST_F(HttpSignatureTest, ExactHeadersUnderFixedClock) {
  Result<HeaderList> headers = SignHttpRequest("POST", kUrl, kBody, kKeyId, *key_, clock_);
  ASSERT_TRUE(headers.ok()) << headers.status().ToString();
  HeaderList expected = {
      {"Host", "social.example:8443"},
      {"Date", "Fri, 15 Jan 2027 08:00:00 GMT"},
      {"Digest", "SHA-256=JeE18werLvQnEoHViKDam+ZK1D8E27TBC2kIISI7pIY="},
      {"Content-Type", "application/activity+json"},
      {"Signature", std::string("keyId=\"") + kKeyId +
                        "\",algorithm=\"rsa-sha256\",headers=\"(request-target) host date digest "
                        "content-type\",signature=\"" +
                        kExpectedSignature + "\""},
  };
  EXPECT_EQ(*headers, expected);
}

TEST_F(HttpSignatureTest, SignatureVerifiesWithPublicKey) {
  Result<HeaderList> headers = SignHttpRequest("post", kUrl, kBody, kKeyId, *key_, clock_);
  ASSERT_TRUE(headers.ok());
  std::string sig = *Base64Decode(SignatureParam(*FindHeader(*headers, "Signature"), "signature"));
  EXPECT_EQ(sig.size(), 256u);
  EXPECT_TRUE(VerifyRsaSha256(key_->PublicKeyPem(), kExpectedSigningString, sig));
  EXPECT_FALSE(
      VerifyRsaSha256(key_->PublicKeyPem(), std::string(kExpectedSigningString) + " ", sig));
  auto other = SigningKey::Generate();
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(VerifyRsaSha256(other->PublicKeyPem(), kExpectedSigningString, sig));
}

TEST_F(HttpSignatureTest, TamperedBodyChangesDigestAndSignature) {
  auto a = SignHttpRequest("POST", kUrl, kBody, kKeyId, *key_, clock_);
  auto b = SignHttpRequest("POST", kUrl, R"({"type":"Delete"})", kKeyId, *key_, clock_);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(*FindHeader(*a, "Digest"), *FindHeader(*b, "Digest"));
  EXPECT_NE(*FindHeader(*a, "Signature"), *FindHeader(*b, "Signature"));
  // The original signature does not cover the tampered body's digest.
  std::string sig = *Base64Decode(SignatureParam(*FindHeader(*a, "Signature"), "signature"));
  std::string tampered = kExpectedSigningString;
  tampered.replace(tampered.find("JeE18"), 44, FindHeader(*b, "Digest")->substr(8));
  EXPECT_FALSE(VerifyRsaSha256(key_->PublicKeyPem(), tampered, sig));
}

TEST_F(HttpSignatureTest, DateFollowsTheClockAndDefaultPortIsOmitted) {
  clock_.Set(FromUnixMicros(0));
  auto h = SignHttpRequest("POST", "https://Mastodon.Example/inbox", "", kKeyId, *key_, clock_);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(*FindHeader(*h, "Date"), "Thu, 01 Jan 1970 00:00:00 GMT");
  EXPECT_EQ(*FindHeader(*h, "Host"), "mastodon.example");
  EXPECT_EQ(*FindHeader(*h, "Digest"), "SHA-256=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=");
  EXPECT_EQ(FormatImfFixdate(FromUnixMicros(951'782'400'000'000)), "Tue, 29 Feb 2000 00:00:00 GMT");
  EXPECT_EQ(FormatImfFixdate(FromUnixMicros(1'798'761'599'999'999)),
            "Thu, 31 Dec 2026 23:59:59 GMT");
}

// Follower synchronisation (Mastodon's ActivityPub::DeliveryWorker with synchronize_followers):
// Collection-Synchronization is sent after Content-Type and signed, as app/lib/request.rb signs
// every header but User-Agent and Accept-Encoding.
TEST_F(HttpSignatureTest, ExtraHeadersAreSentAndSignedAfterContentType) {
  const std::string sync =
      "collectionId=\"https://bulkhead.example/users/bob/followers\", "
      "url=\"https://bulkhead.example/users/bob/followers_synchronization\", "
      "digest=\"b08ab6951c7d6cc2b91e17ebd9557da7fae02489728e9ea8d4fc1fa6c2e1bd1e\"";
  Result<HeaderList> headers =
      SignHttpRequest("POST", kUrl, kBody, kKeyId, *key_, clock_, kActivityJsonContentType,
                      {{"Collection-Synchronization", sync}});
  ASSERT_TRUE(headers.ok()) << headers.status().ToString();
  ASSERT_EQ(headers->size(), 6u);
  EXPECT_EQ((*headers)[4], std::make_pair(std::string("Collection-Synchronization"), sync));
  const std::string signature = *FindHeader(*headers, "Signature");
  EXPECT_EQ(SignatureParam(signature, "headers"),
            "(request-target) host date digest content-type collection-synchronization");
  std::string sig = *Base64Decode(SignatureParam(signature, "signature"));
  EXPECT_TRUE(VerifyRsaSha256(
      key_->PublicKeyPem(),
      std::string(kExpectedSigningString) + "\ncollection-synchronization: " + sync, sig));
  EXPECT_FALSE(VerifyRsaSha256(key_->PublicKeyPem(), kExpectedSigningString, sig))
      << "the header is covered";
}

TEST_F(HttpSignatureTest, ExtraHeadersCannotReplaceTheSignedOnesOrCarryControls) {
  for (const char* name : {"Host", "date", "Digest", "content-type", "Signature"}) {
    auto r = SignHttpRequest("POST", kUrl, kBody, kKeyId, *key_, clock_, kActivityJsonContentType,
                             {{name, "x"}});
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << name;
  }
  EXPECT_FALSE(SignHttpRequest("POST", kUrl, kBody, kKeyId, *key_, clock_, kActivityJsonContentType,
                               {{"Bad Name", "x"}})
                   .ok());
  EXPECT_FALSE(SignHttpRequest("POST", kUrl, kBody, kKeyId, *key_, clock_, kActivityJsonContentType,
                               {{"X-Ok", "a\r\nInjected: 1"}})
                   .ok());
}

TEST_F(HttpSignatureTest, RefusesBadInputs) {
  EXPECT_FALSE(SignHttpRequest("POST", "not a url", kBody, kKeyId, *key_, clock_).ok());
  EXPECT_FALSE(SignHttpRequest("POST", kUrl, kBody, "bad\"id", *key_, clock_).ok());
  EXPECT_FALSE(SignHttpRequest("POST", kUrl, kBody, "", *key_, clock_).ok());
  EXPECT_FALSE(SignHttpRequest("PO ST", kUrl, kBody, kKeyId, *key_, clock_).ok());
  EXPECT_FALSE(SignHttpRequest("POST", kUrl, kBody, kKeyId, *key_, clock_, "a\nb").ok());
}

TEST_F(HttpSignatureTest, SigningKeyRefusesNonRsaAndSmallKeys) {
  EXPECT_EQ(SigningKey::FromPem("garbage").status().code(), StatusCode::kInvalidArgument);
  EVP_PKEY* ec = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
  EVP_PKEY* small = EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", size_t{1024});
  for (EVP_PKEY* k : {ec, small}) {
    encoders_internal::BioPtr bio(BIO_new(BIO_s_mem()));
    PEM_write_bio_PrivateKey(bio.get(), k, nullptr, nullptr, 0, nullptr, nullptr);
    char* data = nullptr;
    long len = BIO_get_mem_data(bio.get(), &data);
    std::string pem(data, len);
    Result<SigningKey> key = SigningKey::FromPem(pem);
    EXPECT_FALSE(key.ok());
    // Error messages never echo key material.
    EXPECT_EQ(key.status().message().find("BEGIN"), std::string::npos);
    EVP_PKEY_free(k);
  }
  EXPECT_EQ(SigningKey::LoadFile("/nonexistent/key.pem").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(key_->bits(), 2048);
  EXPECT_EQ(key_->PublicKeyPem().rfind("-----BEGIN PUBLIC KEY-----", 0), 0u);
}

TEST_F(HttpSignatureTest, SigningKeyErrorsNameTheProblem) {
  auto message = [](std::string_view pem) { return SigningKey::FromPem(pem).status().message(); };
  EXPECT_NE(message("garbage").find("not PEM"), std::string::npos);
  EXPECT_NE(message(key_->PublicKeyPem()).find("public key"), std::string::npos);
  // An encrypted PKCS#8 key.
  EVP_PKEY* rsa = EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", size_t{2048});
  encoders_internal::BioPtr bio(BIO_new(BIO_s_mem()));
  ASSERT_EQ(PEM_write_bio_PKCS8PrivateKey(bio.get(), rsa, EVP_aes_128_cbc(), nullptr, 0, nullptr,
                                          const_cast<char*>("secret")),
            1);
  EVP_PKEY_free(rsa);
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);
  EXPECT_NE(message(std::string(data, len)).find("encrypted"), std::string::npos);
  EVP_PKEY* ec = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
  encoders_internal::BioPtr ec_bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PrivateKey(ec_bio.get(), ec, nullptr, nullptr, 0, nullptr, nullptr);
  EVP_PKEY_free(ec);
  len = BIO_get_mem_data(ec_bio.get(), &data);
  EXPECT_NE(message(std::string(data, len)).find("must be an RSA key"), std::string::npos);
}

TEST_F(HttpSignatureTest, FingerprintIsSha256OfTheSpki) {
  // openssl pkey -in key.pem -pubout -outform DER | openssl dgst -sha256 -binary | base64
  //   | tr -d =
  std::string fp = key_->PublicKeyFingerprint();
  EXPECT_EQ(fp, "SHA256:Hb3dRzqkchoCddxuoo9iaqkb22CF6PDMH3Ily9h37Yc");
  EXPECT_NE(fp, SigningKey::Generate()->PublicKeyFingerprint());
}

TEST_F(HttpSignatureTest, LoadFileReadsPem) {
  std::string path = ::testing::TempDir() + "/http_signature_test_" + std::to_string(::getpid());
  {
    std::ofstream f(path);
    f << kTestKeyPem;
  }
  Result<SigningKey> key = SigningKey::LoadFile(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  EXPECT_EQ(key->PublicKeyPem(), key_->PublicKeyPem());
}

// Cross-check against npm http-signature (Joyent's verifier).
TEST_F(HttpSignatureTest, NpmHttpSignatureVerifies) {
  std::optional<std::string> root = testing_node::SourceDir();
  if (!root) GTEST_SKIP() << "BULKHEAD_SOURCE_DIR unset or node/tests/node_modules missing";
  auto generated = SigningKey::Generate();
  ASSERT_TRUE(generated.ok());
  struct Case {
    const SigningKey* key;
    std::string url;
    std::string path;
    std::string body;
    HeaderList extra;
  };
  const HeaderList sync = {{"Collection-Synchronization",
                            "collectionId=\"https://b.example/f\", url=\"https://b.example/s\", "
                            "digest=\"00ff\""}};
  std::vector<Case> cases = {
      {key_.get(), kUrl, "/users/alice/inbox?x=1", kBody, {}},
      {&*generated, "https://mastodon.example/inbox", "/inbox", R"({"a":"ü"})", {}},
      {&*generated, "http://127.0.0.1:3000/users/x/inbox", "/users/x/inbox", "", {}},
      {&*generated, "https://mastodon.example/inbox", "/inbox", kBody, sync},
  };
  for (const Case& c : cases) {
    Result<HeaderList> headers = SignHttpRequest("POST", c.url, c.body, kKeyId, *c.key, clock_,
                                                 kActivityJsonContentType, c.extra);
    ASSERT_TRUE(headers.ok());
    json hs = json::object();
    for (const auto& [n, v] : *headers) hs[n] = v;
    json input = {{"method", "POST"},
                  {"path", c.path},
                  {"headers", hs},
                  {"body", Base64Encode(c.body)},
                  {"public_key_pem", c.key->PublicKeyPem()}};
    testing_node::NodeRun run =
        testing_node::RunNodeTool(*root, "verify_http_signature.mjs", input.dump());
    ASSERT_EQ(run.exit_code, 0) << run.out;
    json out = json::parse(run.out);
    EXPECT_TRUE(out["verified"].get<bool>()) << c.url;
    EXPECT_TRUE(out["digest_ok"].get<bool>()) << c.url;
    EXPECT_EQ(out["key_id"], kKeyId);
    EXPECT_EQ(out["algorithm"], "RSA-SHA256");  // http-signature upper-cases it
    json signed_headers =
        json::parse(R"j(["(request-target)","host","date","digest","content-type"])j");
    if (!c.extra.empty()) signed_headers.push_back("collection-synchronization");
    EXPECT_EQ(out["signed_headers"], signed_headers);
  }
  // And a tampered body is caught by the digest check.
  Result<HeaderList> headers = SignHttpRequest("POST", kUrl, kBody, kKeyId, *key_, clock_);
  json hs = json::object();
  for (const auto& [n, v] : *headers) hs[n] = v;
  json input = {{"method", "POST"},
                {"path", "/users/alice/inbox?x=1"},
                {"headers", hs},
                {"body", Base64Encode("tampered")},
                {"public_key_pem", key_->PublicKeyPem()}};
  json out =
      json::parse(testing_node::RunNodeTool(*root, "verify_http_signature.mjs", input.dump()).out);
  EXPECT_TRUE(out["verified"].get<bool>());    // headers untouched, so the signature holds...
  EXPECT_FALSE(out["digest_ok"].get<bool>());  // ...but the body no longer matches the Digest
}

// The private key has no string form: no ToString, no operator<<.
static_assert(!testing::HasStringForm<SigningKey>);

}  // namespace
}  // namespace bulkhead
