#include "bulkhead/util/base64.h"

#include <gtest/gtest.h>

namespace bulkhead {
namespace {

TEST(Base64Test, Rfc4648Vectors) {
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Encode("f"), "Zg==");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64Encode("foo"), "Zm9v");
  EXPECT_EQ(Base64Encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(Base64UrlEncode("\xfb\xff"), "-_8");
}

TEST(Base64Test, DecodesBothAlphabetsWithOrWithoutPadding) {
  EXPECT_EQ(*Base64Decode("Zm8="), "fo");
  EXPECT_EQ(*Base64Decode("Zm8"), "fo");
  EXPECT_EQ(*Base64Decode("-_8"), "\xfb\xff");
  EXPECT_EQ(*Base64Decode("+/8="), "\xfb\xff");
}

TEST(Base64Test, RejectsBadInputWithReason) {
  auto r = Base64Decode("Zm9v!A");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("offset 4"), std::string::npos);
  EXPECT_FALSE(Base64Decode("Z").ok());
}

}  // namespace
}  // namespace bulkhead
