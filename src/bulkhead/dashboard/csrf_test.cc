#include "bulkhead/dashboard/csrf.h"

#include <gtest/gtest.h>

#include "bulkhead/dashboard/basic_auth.h"
#include "bulkhead/util/base64.h"

namespace bulkhead::dashboard {
namespace {

TEST(CsrfGuardTest, TokenIsBoundToSecretAndPrincipal) {
  CsrfGuard guard("secret");
  std::string token = guard.TokenFor("Basic dTpw");
  EXPECT_EQ(token.size(), 64u);
  EXPECT_TRUE(guard.Check("Basic dTpw", token));
  EXPECT_FALSE(guard.Check("Basic other", token));
  EXPECT_FALSE(guard.Check("Basic dTpw", ""));
  EXPECT_FALSE(guard.Check("Basic dTpw", token.substr(1)));
  std::string flipped = token;
  flipped[10] = flipped[10] == 'a' ? 'b' : 'a';
  EXPECT_FALSE(guard.Check("Basic dTpw", flipped));
  EXPECT_FALSE(CsrfGuard("other").Check("Basic dTpw", token));
}

TEST(CsrfGuardTest, RandomSecretsDiffer) {
  EXPECT_NE(CsrfGuard().TokenFor(""), CsrfGuard().TokenFor(""));
}

std::string Basic(const std::string& user_pass) { return "Basic " + Base64Encode(user_pass); }

TEST(BasicAuthTest, AnyUserWithThePassword) {
  EXPECT_TRUE(BasicAuthMatches(Basic("admin:s3cret"), "s3cret"));
  EXPECT_TRUE(BasicAuthMatches(Basic(":s3cret"), "s3cret"));
  EXPECT_TRUE(BasicAuthMatches("basic  " + Base64Encode("x:s3:cret"), "s3:cret"));
  EXPECT_FALSE(BasicAuthMatches(Basic("admin:wrong"), "s3cret"));
  EXPECT_FALSE(BasicAuthMatches(Basic("s3cret"), "s3cret"));  // no colon
  EXPECT_FALSE(BasicAuthMatches("Bearer s3cret", "s3cret"));
  EXPECT_FALSE(BasicAuthMatches("Basic !!!", "s3cret"));
  EXPECT_FALSE(BasicAuthMatches("", "s3cret"));
}

TEST(BasicAuthTest, NoPasswordAdmitsEveryone) {
  EXPECT_TRUE(BasicAuthMatches("", ""));
  EXPECT_TRUE(BasicAuthMatches(Basic("a:b"), ""));
}

}  // namespace
}  // namespace bulkhead::dashboard
