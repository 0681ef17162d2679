#include "bulkhead/protocol/resp.h"

#include <gtest/gtest.h>

namespace bulkhead {
namespace {

TEST(RespTest, Replies) {
  std::string out;
  resp::AppendSimple(out, "OK");
  resp::AppendError(out, "bad\r\nthing");
  resp::AppendBulk(out, "{\"a\":1}");
  resp::AppendBulk(out, "");
  resp::AppendNull(out);
  resp::AppendError(out, "Job not unique", "NOTUNIQUE");
  EXPECT_EQ(out,
            "+OK\r\n-ERR bad  thing\r\n$7\r\n{\"a\":1}\r\n$0\r\n\r\n$-1\r\n"
            "-NOTUNIQUE Job not unique\r\n");
}

}  // namespace
}  // namespace bulkhead
