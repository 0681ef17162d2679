#include "bulkhead/util/ascii.h"

#include <gtest/gtest.h>

namespace bulkhead {
namespace {

TEST(AsciiTest, CaseFoldingTouchesOnlyAsciiLetters) {
  EXPECT_EQ(AsciiLower("HTTPS://Host.Example:443/A-Z_09"), "https://host.example:443/a-z_09");
  EXPECT_EQ(AsciiUpper("get /Path"), "GET /PATH");
  EXPECT_EQ(AsciiLower("\xC3\x89T\xC3\x89"), "\xC3\x89t\xC3\x89") << "UTF-8 bytes unchanged";
  EXPECT_EQ(AsciiLower("@[`{"), "@[`{") << "the neighbours of the letter ranges";
  EXPECT_EQ(AsciiLower(""), "");
}

TEST(AsciiTest, EqualsIgnoreCaseComparesAsciiLettersCaselessly) {
  EXPECT_TRUE(EqualsIgnoreCase("Content-Type", "content-TYPE"));
  EXPECT_FALSE(EqualsIgnoreCase("Content-Type", "Content-Typ"));
  EXPECT_FALSE(EqualsIgnoreCase("@", "`"));
}

TEST(AsciiTest, TrimAsciiDropsTheGivenBytesAtBothEnds) {
  EXPECT_EQ(TrimAscii(" \t value with  spaces \t "), "value with  spaces");
  EXPECT_EQ(TrimAscii("value\r\n"), "value\r\n") << "by default only space and tab";
  EXPECT_EQ(TrimAscii(" value \r\n", " \t\r\n"), "value");
  EXPECT_EQ(TrimAscii(" \t "), "");
  EXPECT_EQ(TrimAscii(""), "");
  EXPECT_EQ(TrimAscii("x"), "x");
}

}  // namespace
}  // namespace bulkhead
