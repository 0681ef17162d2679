#include "bulkhead/protocol/pwdhash.h"

#include <gtest/gtest.h>
#include <openssl/sha.h>

namespace bulkhead {
namespace {

TEST(PasswordHashTest, OneIterationIsPlainSha256OfPasswordAndSalt) {
  // sha256("password" "salt") computed independently (coreutils sha256sum).
  EXPECT_EQ(PasswordHash("password", "salt", 1),
            "7a37b85c8918eac19a9089c0fa5a2ab4dce3f90528dcdeec108b23ddf3607b99");
}

TEST(PasswordHashTest, LaterRoundsHashTheRawDigestNotItsHex) {
  unsigned char d[SHA256_DIGEST_LENGTH];
  std::string in = "secretabc123";
  SHA256(reinterpret_cast<const unsigned char*>(in.data()), in.size(), d);
  SHA256(d, sizeof(d), d);
  SHA256(d, sizeof(d), d);
  char hex[65];
  for (int i = 0; i < 32; ++i) std::snprintf(hex + 2 * i, 3, "%02x", d[i]);
  EXPECT_EQ(PasswordHash("secret", "abc123", 3), std::string(hex));
  EXPECT_EQ(PasswordHash("secret", "abc123", 0), PasswordHash("secret", "abc123", 1));
}

TEST(PasswordHashTest, ConstantTimeEquals) {
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abcd"));
}

}  // namespace
}  // namespace bulkhead
