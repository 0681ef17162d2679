#include "bulkhead/relay/apns_token.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "bulkhead/util/base64.h"

namespace bulkhead {
namespace {

nlohmann::json Part(const std::string& jwt, int index) {
  size_t a = jwt.find('.');
  size_t b = jwt.find('.', a + 1);
  std::string part = index == 0 ? jwt.substr(0, a) : jwt.substr(a + 1, b - a - 1);
  return nlohmann::json::parse(*Base64Decode(part));
}

TEST(ApnsTokenTest, SignsTheClaimsAppleAsksFor) {
  ManualClock clock(FromUnixMicros(1'700'000'000'000'000));
  auto token = ApnsToken::Create(*VapidKey::Generate(), "KEY1234567", "TEAM123456", clock);
  ASSERT_TRUE(token.ok());
  auto jwt = token->Current();
  ASSERT_TRUE(jwt.ok());
  EXPECT_EQ(Part(*jwt, 0), (nlohmann::json{{"alg", "ES256"}, {"kid", "KEY1234567"}}));
  EXPECT_EQ(Part(*jwt, 1), (nlohmann::json{{"iss", "TEAM123456"}, {"iat", 1'700'000'000}}));
  std::string sig = *Base64Decode(jwt->substr(jwt->rfind('.') + 1));
  EXPECT_EQ(sig.size(), 64u);  // JOSE R||S
}

TEST(ApnsTokenTest, ReusedWithinTheWindowAndRefreshedAfterIt) {
  ManualClock clock(FromUnixMicros(1'700'000'000'000'000));
  auto token = ApnsToken::Create(*VapidKey::Generate(), "K", "T", clock);
  ASSERT_TRUE(token.ok());
  std::string first = *token->Current();
  clock.Advance(std::chrono::minutes(49));
  EXPECT_EQ(*token->Current(), first);
  EXPECT_EQ(token->signed_count(), 1u);
  clock.Advance(std::chrono::minutes(1));
  EXPECT_NE(*token->Current(), first);
  EXPECT_EQ(token->signed_count(), 2u);
}

TEST(ApnsTokenTest, AnExpiredAnswerRenewsOnlyAfterTwentyMinutes) {
  ManualClock clock(FromUnixMicros(1'700'000'000'000'000));
  auto token = ApnsToken::Create(*VapidKey::Generate(), "K", "T", clock);
  std::string first = *token->Current();
  clock.Advance(std::chrono::minutes(19));
  EXPECT_FALSE(token->Expired());  // APNs and this clock disagree: no TooManyProviderTokenUpdates
  EXPECT_EQ(*token->Current(), first);
  clock.Advance(std::chrono::minutes(1));
  EXPECT_TRUE(token->Expired());
  EXPECT_NE(*token->Current(), first);
}

TEST(ApnsTokenTest, RefusesAWindowOutsideApples) {
  ManualClock clock;
  EXPECT_FALSE(
      ApnsToken::Create(*VapidKey::Generate(), "K", "T", clock, std::chrono::minutes(19)).ok());
  EXPECT_FALSE(
      ApnsToken::Create(*VapidKey::Generate(), "K", "T", clock, std::chrono::minutes(60)).ok());
  EXPECT_FALSE(ApnsToken::Create(*VapidKey::Generate(), "", "T", clock).ok());
}

}  // namespace
}  // namespace bulkhead
