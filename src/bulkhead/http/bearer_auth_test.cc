#include "bulkhead/http/bearer_auth.h"

#include <gtest/gtest.h>

#include <optional>

namespace bulkhead {
namespace {

TEST(BearerAuthTest, TokenMatching) {
  EXPECT_TRUE(BearerTokenMatches("", ""));
  EXPECT_TRUE(BearerTokenMatches("anything", ""));
  EXPECT_TRUE(BearerTokenMatches("Bearer s3cret", "s3cret"));
  EXPECT_TRUE(BearerTokenMatches("bearer  s3cret", "s3cret"));
  EXPECT_FALSE(BearerTokenMatches("", "s3cret"));
  EXPECT_FALSE(BearerTokenMatches("Bearer s3cre", "s3cret"));
  EXPECT_FALSE(BearerTokenMatches("Bearer s3cretX", "s3cret"));
  EXPECT_FALSE(BearerTokenMatches("Basic s3cret", "s3cret"));
  EXPECT_FALSE(BearerTokenMatches("Bearers3cret", "s3cret"));
  EXPECT_FALSE(BearerTokenMatches("Bearer", "s3cret"));
}

TEST(BearerAuthTest, RefusesWith401AndWwwAuthenticate) {
  bool ran = false;
  auto handler = RequireBearer("s3cret", [&](const HttpRequestIn&, HttpServer::Reply reply) {
    ran = true;
    reply(HttpResponseOut::Json(200, "{}"));
  });
  std::optional<HttpResponseOut> out;
  HttpRequestIn req;
  handler(req, [&](HttpResponseOut r) { out = std::move(r); });
  ASSERT_TRUE(out);
  EXPECT_FALSE(ran);
  EXPECT_EQ(out->status, 401);
  ASSERT_EQ(out->headers.size(), 1u);
  EXPECT_EQ(out->headers[0].first, "WWW-Authenticate");
  EXPECT_NE(out->body.find("Authorization: Bearer"), std::string::npos);

  req.headers["authorization"] = "Bearer s3cret";
  handler(req, [&](HttpResponseOut r) { out = std::move(r); });
  EXPECT_TRUE(ran);
  EXPECT_EQ(out->status, 200);
}

}  // namespace
}  // namespace bulkhead
