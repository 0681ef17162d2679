#include "bulkhead/redis/redis_reply.h"

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <cstring>

namespace bulkhead {
namespace {

// Parses `wire` with hiredis's reader and converts the one reply it holds.
RedisReply Parse(const std::string& wire) {
  redisReader* reader = redisReaderCreate();
  EXPECT_EQ(redisReaderFeed(reader, wire.data(), wire.size()), REDIS_OK);
  void* raw = nullptr;
  EXPECT_EQ(redisReaderGetReply(reader, &raw), REDIS_OK);
  EXPECT_NE(raw, nullptr);
  RedisReply reply = RedisReply::FromHiredis(*static_cast<redisReply*>(raw));
  freeReplyObject(raw);
  redisReaderFree(reader);
  return reply;
}

TEST(RedisReplyTest, ConvertsEveryType) {
  EXPECT_EQ(Parse("+OK\r\n"), RedisReply::OfStatus("OK"));
  EXPECT_EQ(Parse("-ERR wrong\r\n"), RedisReply::OfError("ERR wrong"));
  EXPECT_EQ(Parse(":-42\r\n"), RedisReply::OfInteger(-42));
  EXPECT_EQ(Parse(std::string("$3\r\na\0b\r\n", 9)), RedisReply::OfString(std::string("a\0b", 3)));
  EXPECT_EQ(Parse("$-1\r\n"), RedisReply::OfNil());
  EXPECT_EQ(Parse("*-1\r\n"), RedisReply::OfNil());
  EXPECT_EQ(
      Parse("*3\r\n:1\r\n*1\r\n$1\r\nx\r\n$-1\r\n"),
      RedisReply::OfArray({RedisReply::OfInteger(1),
                           RedisReply::OfArray({RedisReply::OfString("x")}), RedisReply::OfNil()}));
  EXPECT_EQ(Parse("*0\r\n"), RedisReply::OfArray({}));
}

TEST(RedisReplyTest, ErrorCodesAndText) {
  RedisReply noscript = RedisReply::OfError("NOSCRIPT No matching script. Please use EVAL.");
  EXPECT_TRUE(noscript.IsErrorCode("NOSCRIPT"));
  EXPECT_FALSE(noscript.IsErrorCode("NOSCRIPTX"));
  EXPECT_FALSE(noscript.IsErrorCode("ERR"));
  EXPECT_FALSE(RedisReply::OfString("NOSCRIPT").IsErrorCode("NOSCRIPT"));
  EXPECT_TRUE(RedisReply::OfError("READONLY").IsErrorCode("READONLY"));
  EXPECT_TRUE(RedisReply::OfStatus("PONG").Is("PONG"));
  EXPECT_TRUE(RedisReply::OfString("master").Is("master"));
  EXPECT_FALSE(RedisReply::OfError("PONG").Is("PONG"));
  EXPECT_EQ(RedisReply::OfArray({RedisReply::OfStatus("OK"), RedisReply::OfNil(),
                                 RedisReply::OfInteger(3), RedisReply::OfString("v")})
                .ToString(),
            "[+OK, nil, :3, $\"v\"]");
}

}  // namespace
}  // namespace bulkhead
