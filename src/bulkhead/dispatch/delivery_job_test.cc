// The job API of docs/deliveries.md as ParseDeliveryJob (PUSH-time validation) and
// BuildDeliveryRequest read it: `context`, activitypub `headers` and string activities, webpush
// `unsubscribe_url`, and what is left of a job that no longer parses.
#include "bulkhead/dispatch/delivery_job.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "bulkhead/encoders/http_signature.h"
#include "bulkhead/engine/job_parser.h"
#include "bulkhead/util/base64.h"

namespace bulkhead {
namespace {

using nlohmann::json;

constexpr char kJobTestKeyId[] = "https://social.example/users/alice#main-key";

const SigningKey& JobTestActorKey() {
  static const SigningKey key = *SigningKey::Generate(2048);
  return key;
}

class DeliveryJobTest : public ::testing::Test {
 protected:
  DeliveryJobTest() { keys_.Add(kJobTestKeyId, JobTestActorKey()); }

  JobRecord Record(const std::string& jobtype, json arg, json extra = json::object()) {
    json doc = {{"jid", "jid-0123456789"}, {"jobtype", jobtype}, {"args", json::array({arg})}};
    doc.update(extra);
    Result<JobRecord> record = ParseJobDocument(doc, clock_.Now());
    EXPECT_TRUE(record.ok()) << record.status().ToString();
    return *record;
  }
  Result<DeliveryJob> Parse(const std::string& jobtype, json arg) {
    return ParseDeliveryJob(Record(jobtype, std::move(arg)), options_, &keys_);
  }
  std::string ErrorOf(const std::string& jobtype, json arg) {
    Result<DeliveryJob> job = Parse(jobtype, std::move(arg));
    EXPECT_FALSE(job.ok());
    EXPECT_EQ(job.status().code(), StatusCode::kInvalidArgument);
    return job.status().message();
  }

  static json WebPushArg() {
    static const std::string p256dh = VapidKey::Generate()->public_key_b64url();
    return {{"subscription",
             {{"endpoint", "https://push.example/sub/1"},
              {"keys", {{"p256dh", p256dh}, {"auth", Base64UrlEncode(std::string(16, 'a'))}}}}},
            {"payload", "hi"}};
  }
  static json ActivityPubArg() {
    return {{"inbox", "https://remote.example/inbox"},
            {"activity", {{"type", "Create"}}},
            {"key_id", kJobTestKeyId}};
  }
  static json WebhookArg() { return {{"url", "https://hooks.example/x"}}; }
  static std::vector<std::pair<std::string, json>> EveryKind() {
    return {
        {"webpush", WebPushArg()}, {"activitypub", ActivityPubArg()}, {"webhook", WebhookArg()}};
  }

  ManualClock clock_;
  InMemoryKeyRing keys_;
  DeliveryJobOptions options_;
};

TEST_F(DeliveryJobTest, EveryKindCarriesAnOpaqueContextObject) {
  const json context = {{"subscription_id", 12345678901234},
                        {"kind", "mention"},
                        {"nested", {{"list", {1, 2.5, "ü", nullptr, true}}}}};
  for (auto [jobtype, arg] : EveryKind()) {
    Result<DeliveryJob> plain = Parse(jobtype, arg);
    ASSERT_TRUE(plain.ok()) << plain.status().ToString();
    EXPECT_TRUE(plain->context.is_null()) << jobtype;
    arg["context"] = context;
    Result<DeliveryJob> with = Parse(jobtype, arg);
    ASSERT_TRUE(with.ok()) << with.status().ToString();
    EXPECT_EQ(with->context, context) << jobtype;
    arg["context"] = nullptr;
    EXPECT_TRUE(Parse(jobtype, arg)->context.is_null()) << "null is absent";
  }
}

TEST_F(DeliveryJobTest, ContextMustBeAnObjectOfBoundedSize) {
  for (auto [jobtype, arg] : EveryKind()) {
    for (json bad : {json("text"), json(42), json::array({1})}) {
      arg["context"] = bad;
      EXPECT_EQ(ErrorOf(jobtype, arg), jobtype + ": args[0].context must be a JSON object");
    }
    // {"k":"xxx…"}: 8 bytes of JSON around the string.
    arg["context"] = {{"k", std::string(kMaxDeliveryContextBytes - 8, 'x')}};
    EXPECT_TRUE(Parse(jobtype, arg).ok()) << "exactly at the bound";
    arg["context"] = {{"k", std::string(kMaxDeliveryContextBytes - 7, 'x')}};
    EXPECT_EQ(ErrorOf(jobtype, arg),
              jobtype + ": args[0].context is 4097 bytes as JSON; at most 4096");
  }
}

TEST_F(DeliveryJobTest, ActivityPubMaySetCollectionSynchronizationWhichIsSigned) {
  const std::string sync =
      "collectionId=\"https://social.example/users/alice/followers\", "
      "url=\"https://social.example/users/alice/followers_synchronization\", digest=\"abcd\"";
  json arg = ActivityPubArg();
  arg["headers"] = {{"collection-synchronization", sync}};
  Result<DeliveryJob> job = Parse("activitypub", arg);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  Result<HttpRequest> req = BuildDeliveryRequest(*job, nullptr, keys_, clock_);
  ASSERT_TRUE(req.ok()) << req.status().ToString();
  HttpResponse probe;
  probe.headers = req->headers;
  EXPECT_EQ(probe.Header("Collection-Synchronization"), sync);
  ASSERT_TRUE(probe.Header("Signature"));
  EXPECT_NE(probe.Header("Signature")
                ->find("headers=\"(request-target) host date digest content-type "
                       "collection-synchronization\""),
            std::string::npos)
      << *probe.Header("Signature");

  // Without it, the signed list is the usual one.
  req = BuildDeliveryRequest(*Parse("activitypub", ActivityPubArg()), nullptr, keys_, clock_);
  probe.headers = req->headers;
  EXPECT_NE(
      probe.Header("Signature")->find(std::string("headers=\"") + kDeliverySignedHeaders + "\""),
      std::string::npos);
  EXPECT_FALSE(probe.Header("Collection-Synchronization"));
}

TEST_F(DeliveryJobTest, ActivityPubHeadersAreLimitedToCollectionSynchronization) {
  json arg = ActivityPubArg();
  for (const char* name : {"User-Agent", "Date", "Signature", "Content-Type", "X-Anything"}) {
    arg["headers"] = {{name, "x"}};
    EXPECT_EQ(ErrorOf("activitypub", arg),
              std::string("activitypub: args[0].headers: \"") + name +
                  "\" cannot be set; an activitypub job may set only Collection-Synchronization");
  }
  const std::string bad_value =
      "activitypub: args[0].headers.Collection-Synchronization must be a non-empty string "
      "without control characters";
  for (json value : {json(""), json(7), json("a\r\nX-Injected: 1")}) {
    arg["headers"] = {{"Collection-Synchronization", value}};
    EXPECT_EQ(ErrorOf("activitypub", arg), bad_value);
  }
  arg["headers"] = {
      {"Collection-Synchronization", std::string(kMaxActivityPubHeaderBytes + 1, 'a')}};
  EXPECT_EQ(ErrorOf("activitypub", arg),
            "activitypub: args[0].headers.Collection-Synchronization is longer than 4096 bytes");
  arg["headers"] = "Collection-Synchronization: x";
  EXPECT_EQ(ErrorOf("activitypub", arg),
            "activitypub: args[0].headers must be an object of strings");
}

// Mastodon serialises the activity once and signs those bytes (the Digest): a string activity is
// sent byte for byte, whatever its spacing, key order or escapes.
TEST_F(DeliveryJobTest, StringActivityIsTheBodyByteForByte) {
  const std::string activity =
      "{\"type\" : \"Create\",\n  \"id\":\"https://social.example/1\",\"content\":\"caf\\u00e9 "
      "\xC3\xBC \\\"q\\\"\",  \"z\":1.50, \"a\":[ ]}\n";
  json arg = ActivityPubArg();
  arg["activity"] = activity;
  // Through the job's JSON text, as a client sends it.
  json doc = {{"jid", "jid-0123456789"}, {"jobtype", "activitypub"}, {"args", {arg}}};
  Result<JobRecord> record = ParseJobDocument(json::parse(doc.dump()), clock_.Now());
  ASSERT_TRUE(record.ok());
  Result<DeliveryJob> job = ParseDeliveryJob(*record, options_, &keys_);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  Result<HttpRequest> req = BuildDeliveryRequest(*job, nullptr, keys_, clock_);
  ASSERT_TRUE(req.ok()) << req.status().ToString();
  EXPECT_EQ(req->body, activity);
  HttpResponse probe;
  probe.headers = req->headers;
  EXPECT_EQ(probe.Header("Digest"), DigestHeaderValue(activity));
  EXPECT_EQ(probe.Header("Content-Type"), "application/activity+json");
}

TEST_F(DeliveryJobTest, WebPushUnsubscribeUrlFollowsAllowPrivateTargets) {
  json arg = WebPushArg();
  arg["unsubscribe_url"] = "http://social.local/unsubscribe/1";
  EXPECT_EQ(ErrorOf("webpush", arg), "webpush: unsubscribe_url: URL scheme must be https");
  options_.allow_private_targets = true;
  EXPECT_TRUE(Parse("webpush", arg).ok());
}

TEST_F(DeliveryJobTest, ThePreviousFailureIsRead) {
  Result<DeliveryJob> job = ParseDeliveryJob(
      Record("webhook", WebhookArg(),
             {{"retry", 3}, {"failure", {{"retry_count", 1}, {"message", "http 503"}}}}),
      options_, &keys_);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->retry, 3);
  EXPECT_EQ(job->last_retry_count, 1);
  EXPECT_EQ(job->last_failure, "http 503");
  EXPECT_EQ(Parse("webhook", WebhookArg())->last_failure, "");
}

// A job accepted at PUSH that no longer parses (its key removed, private targets no longer
// allowed) still names its target and context in its delivery_dead outcome.
TEST_F(DeliveryJobTest, WhatIsLeftOfAJobThatNoLongerParses) {
  json arg = ActivityPubArg();
  arg["key_id"] = "https://social.example/users/gone#main-key";
  arg["context"] = {{"status_id", 5}};
  JobRecord record = Record("activitypub", arg);
  ASSERT_FALSE(ParseDeliveryJob(record, options_, &keys_).ok());
  DeliveryJob left = ReadRefusedDeliveryJob(record);
  EXPECT_EQ(left.jid, "jid-0123456789");
  EXPECT_EQ(left.jobtype, "activitypub");
  EXPECT_EQ(left.url, "https://remote.example/inbox");
  EXPECT_EQ(left.host, "remote.example");
  EXPECT_EQ(left.context, json({{"status_id", 5}}));

  json push = WebPushArg();
  push["subscription"]["endpoint"] = "https://push.example:8443/sub/2";
  DeliveryJob webpush = ReadRefusedDeliveryJob(Record("webpush", push));
  EXPECT_EQ(webpush.url, "https://push.example:8443/sub/2");
  EXPECT_EQ(webpush.host, "push.example:8443");

  json broken = WebhookArg();
  broken["url"] = "not a url";
  broken["context"] = "not an object";
  DeliveryJob unreadable = ReadRefusedDeliveryJob(Record("webhook", broken));
  EXPECT_EQ(unreadable.jid, "jid-0123456789");
  EXPECT_EQ(unreadable.url, "");
  EXPECT_TRUE(unreadable.context.is_null());
}

}  // namespace
}  // namespace bulkhead
