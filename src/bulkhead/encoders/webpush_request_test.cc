#include "bulkhead/encoders/webpush_request.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "bulkhead/encoders/node_tool_test_util.h"
#include "bulkhead/util/base64.h"

namespace bulkhead {
namespace {

using nlohmann::json;

// RFC 8291 Appendix A user agent (subscriber) key pair and auth secret.
constexpr char kUaPrivate[] = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94";
constexpr char kUaPublic[] =
    "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4";
constexpr char kAuth[] = "BTBZMqHH6r4Tts7J_aSIgg";
constexpr char kEndpoint[] = "https://fcm.googleapis.com/fcm/send/abc:DEF-123?x=1";

json Job(std::string_view encoding = "aes128gcm") {
  return json{{"subscription",
               {{"endpoint", kEndpoint}, {"keys", {{"p256dh", kUaPublic}, {"auth", kAuth}}}}},
              {"payload", R"({"title":"hi","body":"héllo"})"},
              {"ttl", 172800},
              {"urgency", "normal"},
              {"content_encoding", std::string(encoding)}};
}

class WebPushRequestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto signer = VapidSigner::Create(*VapidKey::Generate(), "mailto:ops@example.com", clock_);
    ASSERT_TRUE(signer.ok());
    signer_ = std::move(*signer);
  }
  std::string Names(const HeaderList& headers) {
    std::string out;
    for (const auto& h : headers) out += h.first + ";";
    return out;
  }
  std::string ErrorOf(const json& job, WebPushArgsOptions options = {}) {
    Status st = ValidateWebPushArgs(job, options);
    EXPECT_FALSE(st.ok()) << job.dump();
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    return st.message();
  }
  ManualClock clock_;
  std::unique_ptr<VapidSigner> signer_;
};

TEST_F(WebPushRequestTest, ParsesAllFieldsAndDefaults) {
  json job = Job();
  job["topic"] = "chat-42_X";
  job["urgency"] = "high";
  job["ttl"] = 60;
  Result<WebPushArgs> args = ParseWebPushArgs(job);
  ASSERT_TRUE(args.ok()) << args.status().ToString();
  EXPECT_EQ(args->endpoint, kEndpoint);
  EXPECT_EQ(args->endpoint_url.Origin(), "https://fcm.googleapis.com");
  EXPECT_EQ(args->ttl, 60);
  EXPECT_EQ(args->urgency, "high");
  EXPECT_EQ(args->topic, "chat-42_X");
  EXPECT_EQ(args->encoding, ContentEncoding::kAes128gcm);

  json minimal = {{"subscription",
                   {{"endpoint", kEndpoint}, {"keys", {{"p256dh", kUaPublic}, {"auth", kAuth}}}}}};
  Result<WebPushArgs> m = ParseWebPushArgs(minimal);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->ttl, kDefaultWebPushTtl);
  EXPECT_EQ(m->urgency, "normal");
  EXPECT_FALSE(m->payload.has_value());
  EXPECT_FALSE(m->topic.has_value());
  // A Faktory args array holding the object is accepted.
  EXPECT_TRUE(ValidateWebPushArgs(json::array({minimal})).ok());
}

TEST_F(WebPushRequestTest, RefusesBadJobsWithNamedField) {
  json job = Job();
  job["subscription"]["endpoint"] = "http://push.example/x";
  EXPECT_EQ(ErrorOf(job), "subscription.endpoint: URL scheme must be https");
  WebPushArgsOptions plain;
  plain.allow_plain_http = true;
  EXPECT_TRUE(ValidateWebPushArgs(job, plain).ok());

  job = Job();
  job["subscription"]["endpoint"] = "https://user@push.example/x";
  EXPECT_NE(ErrorOf(job).find("userinfo"), std::string::npos);
  job["subscription"]["endpoint"] = "ftp://push.example/x";
  EXPECT_NE(ErrorOf(job).find("scheme"), std::string::npos);
  job["subscription"]["endpoint"] = "https:///x";
  EXPECT_NE(ErrorOf(job).find("empty host"), std::string::npos);
  job["subscription"]["endpoint"] = 5;
  EXPECT_EQ(ErrorOf(job), "subscription.endpoint must be a string");
  job["subscription"].erase("endpoint");
  EXPECT_EQ(ErrorOf(job), "subscription.endpoint is missing");

  job = Job();
  job["subscription"]["keys"]["auth"] = "AAAA";
  EXPECT_EQ(ErrorOf(job), "subscription.keys.auth must decode to 16 bytes, got 3");
  job = Job();
  job["subscription"]["keys"]["p256dh"] = "BCVx";
  EXPECT_NE(ErrorOf(job).find("subscription.keys.p256dh"), std::string::npos);
  job = Job();
  job["subscription"].erase("keys");
  EXPECT_EQ(ErrorOf(job), "subscription.keys must be an object");

  job = Job();
  job["payload"] = std::string(3994, 'x');
  EXPECT_EQ(ErrorOf(job), "payload is 3994 bytes; aes128gcm allows at most 3993");
  job["content_encoding"] = "aesgcm";
  EXPECT_TRUE(ValidateWebPushArgs(job).ok());
  job["payload"] = std::string(4079, 'x');
  EXPECT_EQ(ErrorOf(job), "payload is 4079 bytes; aesgcm allows at most 4078");
  job = Job();
  job["payload"] = json::object();
  EXPECT_EQ(ErrorOf(job), "payload must be a string");

  job = Job();
  job["urgency"] = "urgent";
  EXPECT_EQ(ErrorOf(job), "urgency must be one of very-low, low, normal, high");
  job = Job();
  job["topic"] = std::string(33, 'a');
  EXPECT_EQ(ErrorOf(job), "topic must be 1 to 32 characters");
  job["topic"] = "has space";
  EXPECT_NE(ErrorOf(job).find("base64url alphabet"), std::string::npos);
  job["topic"] = "a=";
  EXPECT_NE(ErrorOf(job).find("base64url alphabet"), std::string::npos);
  job = Job();
  job["ttl"] = -1;
  EXPECT_NE(ErrorOf(job).find("ttl must be between 0 and 2419200"), std::string::npos);
  job["ttl"] = 2419201;
  EXPECT_NE(ErrorOf(job).find("ttl must be between"), std::string::npos);
  job["ttl"] = 1.5;
  EXPECT_EQ(ErrorOf(job), "ttl must be an integer");
  job["ttl"] = "60";
  EXPECT_EQ(ErrorOf(job), "ttl must be an integer");
  job = Job();
  job["content_encoding"] = "gzip";
  EXPECT_NE(ErrorOf(job).find("content_encoding"), std::string::npos);
  EXPECT_EQ(ErrorOf(json::array()), "webpush argument must be a JSON object");
  EXPECT_EQ(ErrorOf(json{{"payload", "x"}}), "subscription must be an object");
}

TEST_F(WebPushRequestTest, Aes128gcmRequestHeaders) {
  json job = Job();
  job["topic"] = "t1";
  Result<WebPushRequest> req = BuildWebPushRequest(job, *signer_);
  ASSERT_TRUE(req.ok()) << req.status().ToString();
  EXPECT_EQ(req->method, "POST");
  EXPECT_EQ(req->url, kEndpoint);
  EXPECT_EQ(Names(req->headers),
            "TTL;Urgency;Topic;Content-Encoding;Content-Type;Authorization;Content-Length;");
  EXPECT_EQ(*FindHeader(req->headers, "ttl"), "172800");
  EXPECT_EQ(*FindHeader(req->headers, "Urgency"), "normal");
  EXPECT_EQ(*FindHeader(req->headers, "Topic"), "t1");
  EXPECT_EQ(*FindHeader(req->headers, "Content-Encoding"), "aes128gcm");
  EXPECT_EQ(*FindHeader(req->headers, "Content-Type"), "application/octet-stream");
  EXPECT_EQ(*FindHeader(req->headers, "Authorization"),
            "vapid t=" + *signer_->Token("https://fcm.googleapis.com") +
                ",k=" + signer_->key().public_key_b64url());
  EXPECT_EQ(*FindHeader(req->headers, "Content-Length"), std::to_string(req->body.size()));
  EXPECT_EQ(req->body.size(), 86u + std::string(R"({"title":"hi","body":"héllo"})").size() + 17u);
}

TEST_F(WebPushRequestTest, AesgcmRequestUsesLegacyHeaders) {
  Result<WebPushRequest> req = BuildWebPushRequest(Job("aesgcm"), *signer_);
  ASSERT_TRUE(req.ok()) << req.status().ToString();
  EXPECT_EQ(Names(req->headers),
            "TTL;Urgency;Content-Encoding;Content-Type;Encryption;Crypto-Key;"
            "Authorization;Content-Length;");
  std::string crypto_key = *FindHeader(req->headers, "Crypto-Key");
  EXPECT_EQ(crypto_key.rfind("dh=B", 0), 0u);
  EXPECT_NE(crypto_key.find(";p256ecdsa=" + signer_->key().public_key_b64url()), std::string::npos);
  EXPECT_EQ(FindHeader(req->headers, "Encryption")->rfind("salt=", 0), 0u);
  EXPECT_EQ(*FindHeader(req->headers, "Authorization"),
            "WebPush " + *signer_->Token("https://fcm.googleapis.com"));
}

TEST_F(WebPushRequestTest, NoPayloadMeansNoBodyAndNoEncryptionHeaders) {
  json job = Job();
  job.erase("payload");
  Result<WebPushRequest> req = BuildWebPushRequest(job, *signer_);
  ASSERT_TRUE(req.ok());
  EXPECT_TRUE(req->body.empty());
  EXPECT_EQ(Names(req->headers), "TTL;Urgency;Authorization;Content-Length;");
  EXPECT_EQ(*FindHeader(req->headers, "Content-Length"), "0");
}

// Mastodon's request (app/lib/web_push_request.rb, 4.4+): Ttl 172800, Urgency normal, the
// non-standard Unsubscribe-URL header, no Topic; aes128gcm for `standard` subscriptions, else
// the legacy aesgcm. Both encodings carry Unsubscribe-URL unchanged.
TEST_F(WebPushRequestTest, UnsubscribeUrlIsSentAsMastodonsHeader) {
  const std::string unsubscribe =
      "https://social.example/api/web/push_subscriptions/42/unsubscribe?token=a%2Fb_c-d";
  for (const char* encoding : {"aes128gcm", "aesgcm"}) {
    json job = Job(encoding);
    job["unsubscribe_url"] = unsubscribe;
    Result<WebPushArgs> args = ParseWebPushArgs(job);
    ASSERT_TRUE(args.ok()) << args.status().ToString();
    EXPECT_EQ(args->unsubscribe_url, unsubscribe);
    Result<WebPushRequest> req = BuildWebPushRequest(job, *signer_);
    ASSERT_TRUE(req.ok()) << req.status().ToString();
    EXPECT_EQ(Names(req->headers).rfind("TTL;Urgency;Unsubscribe-URL;Content-Encoding;", 0), 0u)
        << Names(req->headers);
    EXPECT_EQ(*FindHeader(req->headers, "unsubscribe-url"), unsubscribe);
    EXPECT_EQ(*FindHeader(req->headers, "TTL"), "172800");
    EXPECT_EQ(*FindHeader(req->headers, "Urgency"), "normal");
    EXPECT_FALSE(FindHeader(req->headers, "Topic"));
  }
  json job = Job();
  EXPECT_FALSE(ParseWebPushArgs(job)->unsubscribe_url.has_value());
  EXPECT_FALSE(FindHeader(BuildWebPushRequest(job, *signer_)->headers, "Unsubscribe-URL"));
}

TEST_F(WebPushRequestTest, UnsubscribeUrlMustBeAnHttpsUrl) {
  json job = Job();
  job["unsubscribe_url"] = "http://social.example/unsubscribe";
  EXPECT_EQ(ErrorOf(job), "unsubscribe_url: URL scheme must be https");
  WebPushArgsOptions plain;
  plain.allow_plain_http = true;
  EXPECT_TRUE(ValidateWebPushArgs(job, plain).ok()) << "http with private targets allowed";
  job["unsubscribe_url"] = 42;
  EXPECT_EQ(ErrorOf(job), "unsubscribe_url must be a URL string");
  job["unsubscribe_url"] = "https://social.example/u\r\nX-Injected: 1";
  EXPECT_EQ(ErrorOf(job).rfind("unsubscribe_url: ", 0), 0u);
  job["unsubscribe_url"] = "mailto:ops@social.example";
  EXPECT_EQ(ErrorOf(job).rfind("unsubscribe_url: ", 0), 0u);
  job["unsubscribe_url"] = nullptr;
  EXPECT_TRUE(ValidateWebPushArgs(job).ok()) << "null is absent";
}

TEST_F(WebPushRequestTest, AudienceKeepsNonDefaultPort) {
  json job = Job();
  job["subscription"]["endpoint"] = "https://Push.Example:8443/p/1";
  Result<WebPushRequest> req = BuildWebPushRequest(job, *signer_);
  ASSERT_TRUE(req.ok());
  std::string auth = *FindHeader(req->headers, "Authorization");
  EXPECT_NE(auth.find(*signer_->Token("https://push.example:8443")), std::string::npos);
}

TEST_F(WebPushRequestTest, DeterministicBodyWithInjectedKeyAndSalt) {
  Result<WebPushArgs> args = ParseWebPushArgs(Job());
  ASSERT_TRUE(args.ok());
  auto sender = WebPushSenderKey::FromPrivateKey(
      *Base64Decode("yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"));
  ASSERT_TRUE(sender.ok());
  WebPushEncryptOptions seams;
  seams.sender_key = &*sender;
  seams.salt = std::string(16, 's');
  auto a = BuildWebPushRequest(*args, *signer_, seams);
  auto b = BuildWebPushRequest(*args, *signer_, seams);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->body, b->body);
  EXPECT_EQ(a->headers, b->headers);  // the cached JWT makes the whole request repeatable
}

// Cross-check against the npm reference implementation (http_ece decrypts, node verifies the JWT).
class WebPushInteropTest : public WebPushRequestTest,
                           public ::testing::WithParamInterface<std::string> {};

TEST_P(WebPushInteropTest, NpmHttpEceDecryptsAndNodeVerifiesVapid) {
  std::optional<std::string> root = testing_node::SourceDir();
  if (!root) GTEST_SKIP() << "BULKHEAD_SOURCE_DIR unset or node/tests/node_modules missing";
  for (size_t size : {size_t{0}, size_t{1}, size_t{300},
                      MaxWebPushPlaintext(*ParseContentEncoding(GetParam()))}) {
    json job = Job(GetParam());
    std::string payload;
    for (size_t i = 0; i < size; ++i) payload += static_cast<char>('a' + i % 26);
    job["payload"] = payload;
    Result<WebPushRequest> req = BuildWebPushRequest(job, *signer_);
    ASSERT_TRUE(req.ok()) << req.status().ToString();
    json headers = json::object();
    for (const auto& [n, v] : req->headers) headers[n] = v;
    json input = {{"ua_private", kUaPrivate},
                  {"auth", kAuth},
                  {"headers", headers},
                  {"body", Base64UrlEncode(req->body)}};
    testing_node::NodeRun run =
        testing_node::RunNodeTool(*root, "webpush_decrypt.mjs", input.dump());
    ASSERT_EQ(run.exit_code, 0) << run.out;
    json out = json::parse(run.out);
    EXPECT_EQ(*Base64Decode(out["plaintext"].get<std::string>()), payload) << "size " << size;
    EXPECT_TRUE(out["jwt_valid"].get<bool>());
    EXPECT_EQ(out["jwt_header"], json::parse(R"({"typ":"JWT","alg":"ES256"})"));
    EXPECT_EQ(out["jwt_claims"]["aud"], "https://fcm.googleapis.com");
    EXPECT_EQ(out["jwt_claims"]["sub"], "mailto:ops@example.com");
    EXPECT_EQ(out["vapid_key"], signer_->key().public_key_b64url());
  }
}

INSTANTIATE_TEST_SUITE_P(WebPushEncodings, WebPushInteropTest,
                         ::testing::Values(std::string("aes128gcm"), std::string("aesgcm")));

}  // namespace
}  // namespace bulkhead
