#include "bulkhead/client/keys_command.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <sstream>

namespace bulkhead {
namespace {

TEST(KeysCommandTest, UrlEscapesTheKeyId) {
  EXPECT_EQ(KeysApiUrl("127.0.0.1:7420", ""), "http://127.0.0.1:7420/api/keys");
  EXPECT_EQ(KeysApiUrl("127.0.0.1:7420", "https://a.example/users/al ice#main-key"),
            "http://127.0.0.1:7420/api/keys/"
            "https%3A%2F%2Fa.example%2Fusers%2Fal%20ice%23main-key");
  EXPECT_EQ(KeysApiUrl("h:1", "a-b.c_d~e"), "http://h:1/api/keys/a-b.c_d~e");
  EXPECT_EQ(KeysApiUrl("https://bulkhead.example:7420/", ""),
            "https://bulkhead.example:7420/api/keys");
  EXPECT_EQ(KeysApiUrl("http://h:1", "k"), "http://h:1/api/keys/k");
}

TEST(KeysCommandTest, UnreachableServerIsAClearError) {
  CLI::App app;
  KeysCommand keys(app);
  // Port 1 on loopback: nothing listens there.
  const char* argv[] = {"bulkhead", "keys", "list", "--http", "127.0.0.1:1"};
  app.parse(5, const_cast<char**>(argv));
  ASSERT_TRUE(keys.selected());
  std::ostringstream out;
  Status s = keys.Run(out);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("cannot reach the bulkhead HTTP API at http://127.0.0.1:1"),
            std::string::npos)
      << s.message();
}

TEST(KeysCommandTest, MissingPemFileIsNamed) {
  CLI::App app;
  KeysCommand keys(app);
  const char* argv[] = {"bulkhead", "keys", "add", "https://a.example/a#k", "/nonexistent.pem"};
  app.parse(5, const_cast<char**>(argv));
  std::ostringstream out;
  Status s = keys.Run(out);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("/nonexistent.pem"), std::string::npos);
}

}  // namespace
}  // namespace bulkhead
