#include "bulkhead/util/percent_encoding.h"

#include <gtest/gtest.h>

#include "bulkhead/util/hex.h"

namespace bulkhead {
namespace {

TEST(PercentEncodingTest, EncodesAllButUnreserved) {
  EXPECT_EQ(PercentEncode("aZ0-._~"), "aZ0-._~");
  EXPECT_EQ(PercentEncode("a b/c?d=é"), "a%20b%2Fc%3Fd%3D%C3%A9");
  EXPECT_EQ(PercentEncode(std::string("\0", 1)), "%00");
}

TEST(PercentEncodingTest, DecodesWhatItEncodes) {
  std::string all;
  for (int c = 0; c < 256; ++c) all.push_back(static_cast<char>(c));
  auto back = PercentDecode(PercentEncode(all));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, all);
}

TEST(PercentEncodingTest, DecodesEitherCaseAndKeepsPlus) {
  auto out = PercentDecode("%2f%2F+x");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, "//+x");
}

TEST(PercentEncodingTest, NamesTheBadEscape) {
  for (const char* bad : {"%", "ab%4", "%zz", "x%4g"}) {
    auto out = PercentDecode(bad);
    ASSERT_FALSE(out.ok()) << bad;
    EXPECT_NE(out.status().message().find("bad percent-escape at byte"), std::string::npos);
  }
  EXPECT_NE(PercentDecode("ab%4").status().message().find("byte 2"), std::string::npos);
}

TEST(HexTest, LowerHexAndDigitValues) {
  EXPECT_EQ(HexLower(std::string_view("\x00\x0f\xab\xff", 4)), "000fabff");
  EXPECT_EQ(HexDigitValue('7'), 7);
  EXPECT_EQ(HexDigitValue('b'), 11);
  EXPECT_EQ(HexDigitValue('F'), 15);
  EXPECT_EQ(HexDigitValue('g'), -1);
  EXPECT_EQ(HexDigitValue('%'), -1);
}

}  // namespace
}  // namespace bulkhead
