#include "bulkhead/relay/fcm_access_token.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "bulkhead/transport/testing/scripted_transport.h"
#include "bulkhead/util/base64.h"

namespace bulkhead {
namespace {

// A service account key file as the Firebase console writes it, with a fresh RSA key.
nlohmann::json Account() {
  FILE* p = popen("openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 2>/dev/null", "r");
  std::string pem;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) pem.append(buf, n);
  pclose(p);
  return {{"type", "service_account"},
          {"project_id", "droid-123"},
          {"private_key_id", "abc"},
          {"private_key", pem},
          {"client_email", "relay@droid-123.iam.gserviceaccount.com"},
          {"token_uri", "https://oauth2.googleapis.com/token"}};
}

TEST(FcmAccessTokenTest, ReadsTheServiceAccountAndSignsTheAssertionGoogleAsksFor) {
  auto account = ParseServiceAccount(Account().dump());
  ASSERT_TRUE(account.ok()) << account.status().message();
  EXPECT_EQ(account->project_id, "droid-123");
  const TimePoint now = FromUnixMicros(1'800'000'000'000'000);
  auto jwt = FcmAssertion(*account, account->token_uri, now);
  ASSERT_TRUE(jwt.ok());
  size_t a = jwt->find('.');
  size_t b = jwt->find('.', a + 1);
  auto header = nlohmann::json::parse(*Base64Decode(jwt->substr(0, a)));
  auto claims = nlohmann::json::parse(*Base64Decode(jwt->substr(a + 1, b - a - 1)));
  EXPECT_EQ(header["alg"], "RS256");
  EXPECT_EQ(header["kid"], "abc");
  EXPECT_EQ(claims["iss"], "relay@droid-123.iam.gserviceaccount.com");
  EXPECT_EQ(claims["scope"], kFcmScope);
  EXPECT_EQ(claims["aud"], "https://oauth2.googleapis.com/token");
  EXPECT_EQ(claims["iat"], 1'800'000'000);
  EXPECT_EQ(claims["exp"], 1'800'003'600);
  EXPECT_EQ(Base64Decode(jwt->substr(b + 1))->size(), 256u);  // RSA-2048 signature
}

TEST(FcmAccessTokenTest, RefusalsNameTheFieldNeverTheKey) {
  nlohmann::json a = Account();
  a["type"] = "authorized_user";
  EXPECT_NE(ParseServiceAccount(a.dump()).status().message().find("not a service account"),
            std::string::npos);
  a = Account();
  a.erase("client_email");
  EXPECT_NE(ParseServiceAccount(a.dump()).status().message().find("no client_email"),
            std::string::npos);
  a = Account();
  a["private_key"] = "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n";
  auto bad = ParseServiceAccount(a.dump());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("private_key"), std::string::npos);
  EXPECT_EQ(bad.status().message().find("not a key"), std::string::npos);
  EXPECT_FALSE(ParseServiceAccount("{").ok());
}

// One exchange serves every Get until five minutes before expires_in; a refusal answers for 10 s
// without another request (no storm), then one more request.
TEST(FcmAccessTokenTest, OneExchangeKeptUntilNearItsExpiryAndRefusalsNotRepeated) {
  ManualClock clock(FromUnixMicros(1'800'000'000'000'000));
  ScriptedTransport transport;
  auto account = ParseServiceAccount(Account().dump());
  ASSERT_TRUE(account.ok());
  FcmAccessToken tokens(std::move(*account), "https://127.0.0.1:1/token", transport, clock);
  std::vector<Result<std::string>> got;
  auto get = [&] { tokens.Get([&](Result<std::string> r) { got.push_back(std::move(r)); }); };
  get();
  get();  // waits for the same exchange
  ASSERT_EQ(transport.calls.size(), 1u);
  EXPECT_EQ(transport.calls[0].request.url, "https://127.0.0.1:1/token");
  EXPECT_NE(transport.calls[0].request.body.find(
                "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion="),
            std::string::npos);
  HttpResponse ok = ScriptedTransport::Status(200);
  ok.body = R"({"access_token":"ya29.a","expires_in":3599,"token_type":"Bearer"})";
  transport.Answer(0, ok);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(*got[1], "ya29.a");
  clock.Advance(std::chrono::minutes(54));
  get();
  EXPECT_EQ(transport.calls.size(), 1u);  // still kept
  clock.Advance(std::chrono::seconds(60));
  get();  // within 5 minutes of its expiry: a new exchange
  ASSERT_EQ(transport.calls.size(), 2u);
  HttpResponse refused = ScriptedTransport::Status(400);
  refused.body = R"({"error":"invalid_grant"})";
  transport.Answer(1, refused);
  ASSERT_FALSE(got.back().ok());
  EXPECT_EQ(got.back().status().code(), StatusCode::kPermissionDenied);
  get();
  EXPECT_EQ(transport.calls.size(), 2u);  // the refusal answers for 10 s
  clock.Advance(std::chrono::seconds(10));
  get();
  EXPECT_EQ(transport.calls.size(), 3u);
}

}  // namespace
}  // namespace bulkhead
