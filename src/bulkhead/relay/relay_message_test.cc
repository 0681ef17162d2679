#include "bulkhead/relay/relay_message.h"

#include <gtest/gtest.h>

#include "bulkhead/relay/base85.h"
#include "bulkhead/util/base64.h"

namespace bulkhead {
namespace {

RelayTarget Apns(std::string extra = "") {
  RelayTarget t;
  t.token = "00ff";
  t.extra = std::move(extra);
  return t;
}

TEST(RelayMessageTest, Aes128gcmCarriesTheBodyAlone) {
  std::map<std::string, std::string> h = {{"content-encoding", "aes128gcm"},
                                          {"ttl", "172800"},
                                          {"urgency", "normal"},
                                          {"unsubscribe-url", "https://s.example/u?t=1"}};
  RelayRead r = ReadRelayMessage(Apns("x/1"), h, std::string("\x01\x02\x03\x04\x05", 5));
  ASSERT_TRUE(r.message) << r.refusal.message;
  EXPECT_TRUE(r.message->rfc8291);
  EXPECT_EQ(r.message->p, Base85Encode(std::string("\x01\x02\x03\x04\x05", 5)));
  EXPECT_EQ(r.message->unsubscribe_url, "https://s.example/u?t=1");
  nlohmann::json payload = ApnsPayload(*r.message);
  EXPECT_EQ(payload["aps"]["alert"], "\xF0\x9F\x8E\xBA");
  EXPECT_EQ(payload["aps"]["mutable-content"], 1);
  EXPECT_EQ(payload["aps"]["content-available"], 1);
  EXPECT_EQ(payload["x"], "x/1");
  EXPECT_FALSE(payload.contains("k"));
  EXPECT_EQ(ApnsPriority(*r.message), 10);
  EXPECT_EQ(ApnsExpiration(*r.message, FromUnixMicros(1'000'000'000'000)), 1'000'000 + 172800);
}

TEST(RelayMessageTest, AesgcmTakesDhAndSaltAsBase85) {
  const std::string dh(65, '\x04');
  const std::string salt(16, '\x07');
  std::map<std::string, std::string> h = {
      {"content-encoding", "aesgcm"},
      {"crypto-key", "dh=" + Base64UrlEncode(dh) + ";p256ecdsa=BAAA"},
      {"encryption", "salt=" + Base64UrlEncode(salt)},
      {"urgency", "low"},
      {"topic", "news"},
      {"ttl", "0"}};
  RelayRead r = ReadRelayMessage(Apns(), h, "cipher");
  ASSERT_TRUE(r.message) << r.refusal.message;
  EXPECT_EQ(r.message->k, Base85Encode(dh));
  EXPECT_EQ(r.message->s, Base85Encode(salt));
  EXPECT_EQ(ApnsPriority(*r.message), 5);
  EXPECT_EQ(ApnsExpiration(*r.message, FromUnixMicros(5'000'000)), 0);
  RelayTarget fcm = Apns();
  fcm.service = RelayService::kFcm;
  r = ReadRelayMessage(fcm, h, "cipher");
  ASSERT_TRUE(r.message);
  nlohmann::json m = FcmMessage(*r.message);
  EXPECT_EQ(m["android"]["priority"], "NORMAL");
  EXPECT_EQ(m["android"]["ttl"], "0s");
  EXPECT_EQ(m["android"]["collapse_key"], "news");
  EXPECT_EQ(m["android"]["data"]["k"], Base85Encode(dh));
  EXPECT_FALSE(m["android"]["data"].contains("rfc"));
}

TEST(RelayMessageTest, RefusesWhatTheRelaysRefuse) {
  RelayRead r = ReadRelayMessage(Apns(), {{"content-encoding", "gzip"}}, "x");
  EXPECT_EQ(r.refusal.status, 415);
  r = ReadRelayMessage(Apns(), {}, "x");
  EXPECT_EQ(r.refusal.status, 415);
  r = ReadRelayMessage(Apns(), {{"content-encoding", "aesgcm"}, {"encryption", "salt=AAAA"}}, "x");
  EXPECT_EQ(r.refusal.status, 400);
  EXPECT_NE(r.refusal.message.find("dh"), std::string::npos);
}

TEST(RelayMessageTest, TooLargeOnceEncodedIs413) {
  // 4096 bytes of APNs payload: base85 makes n bytes 5n/4 characters, plus the aps dictionary.
  std::map<std::string, std::string> h = {{"content-encoding", "aes128gcm"}};
  RelayRead fits = ReadRelayMessage(Apns(), h, std::string(3200, 'a'));
  ASSERT_TRUE(fits.message) << fits.refusal.message;
  RelayRead big = ReadRelayMessage(Apns(), h, std::string(3300, 'a'));
  ASSERT_FALSE(big.message);
  EXPECT_EQ(big.refusal.status, 413);
  EXPECT_NE(big.refusal.message.find("APNs"), std::string::npos);
}

TEST(RelayMessageTest, Aes128gcmToFcmIsMarkedRfc) {
  RelayTarget t = Apns();
  t.service = RelayService::kFcm;
  RelayRead r = ReadRelayMessage(t, {{"content-encoding", "aes128gcm"}}, "abcd");
  ASSERT_TRUE(r.message);
  nlohmann::json m = FcmMessage(*r.message);
  EXPECT_EQ(m["android"]["data"]["rfc"], "1");
  EXPECT_EQ(m["android"]["priority"], "HIGH");
  EXPECT_EQ(m["android"]["notification"]["title"], "\xF0\x9F\x8E\xBA");
  EXPECT_FALSE(m["android"].contains("ttl"));
}

}  // namespace
}  // namespace bulkhead
