#include "bulkhead/relay/base85.h"

#include <gtest/gtest.h>

namespace bulkhead {
namespace {

TEST(Base85Test, BlocksOfFourAreZ85) {
  // ZeroMQ RFC 32's test vector: 0x86 0x4F 0xD2 0x6F 0xB5 0x59 0xF7 0x5B -> "HelloWorld".
  EXPECT_EQ(Base85Encode(std::string("\x86\x4F\xD2\x6F\xB5\x59\xF7\x5B", 8)), "HelloWorld");
}

TEST(Base85Test, TailsOfOneToThreeBytesTakeOneDigitMore) {
  // The relays' encode85: a tail of n bytes is an n-byte big-endian number in n + 1 digits.
  EXPECT_EQ(Base85Encode(std::string("\x00", 1)), "00");
  EXPECT_EQ(Base85Encode(std::string("\xff", 1)), "30");       // 255 = 3*85 + 0
  EXPECT_EQ(Base85Encode(std::string("\x01\x00", 2)), "031");  // 256 = 3*85 + 1
  EXPECT_EQ(Base85Length(0), 0u);
  EXPECT_EQ(Base85Length(1), 2u);
  EXPECT_EQ(Base85Length(3), 4u);
  EXPECT_EQ(Base85Length(4), 5u);
  EXPECT_EQ(Base85Length(4096), 5120u);
}

TEST(Base85Test, RoundTripsEveryLength) {
  std::string bytes;
  for (int n = 0; n < 64; ++n) {
    EXPECT_EQ(Base85Encode(bytes).size(), Base85Length(bytes.size()));
    auto back = Base85Decode(Base85Encode(bytes));
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(*back, bytes);
    bytes.push_back(static_cast<char>(n * 37 + 255));
  }
}

TEST(Base85Test, DecodeRefusesWhatNoInputEncodesTo) {
  EXPECT_FALSE(Base85Decode("0").ok());           // 1 digit: no length encodes to it
  EXPECT_FALSE(Base85Decode("Hello Worl").ok());  // ' ' is not in the alphabet
  EXPECT_FALSE(Base85Decode("#####").ok());       // 85^5 - 1 > 2^32 - 1
}

}  // namespace
}  // namespace bulkhead
