// RedisConnection over TLS against a real redis-server with a certificate from a throw-away CA.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <optional>

#include "bulkhead/redis/redis_connection.h"
#include "bulkhead/redis/testing/redis_server_process.h"
#include "bulkhead/redis/testing/run_until.h"
#include "bulkhead/redis/testing/test_certificates.h"

namespace bulkhead {
namespace {

class RedisTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/bulkhead-redis-tls-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    Result<TestCertificates> certs = MakeTestCertificates(dir_);
    ASSERT_TRUE(certs.ok()) << certs.status().ToString();
    certs_ = *certs;
    Result<std::unique_ptr<RedisServerProcess>> server = RedisServerProcess::Start(
        {.password = "tlspw",
         .tls = RedisServerTls{certs_.cert_file, certs_.key_file, certs_.ca_file, "localhost"}});
    if (!server.ok() &&
        server.status().message().find("not compiled with TLS") != std::string::npos) {
      GTEST_SKIP() << "this redis-server is built without TLS: " << server.status().message();
    }
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(*server);
  }
  void TearDown() override {
    server_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  Status Connect(RedisConnection& conn) {
    std::optional<Status> status;
    conn.Connect([&](Status s) { status = s; });
    EXPECT_TRUE(RunUntil(
        io_, [&] { return status.has_value(); }, "Connect"));
    return status.value_or(Status::Internal("no answer"));
  }

  boost::asio::io_context io_;
  std::string dir_;
  TestCertificates certs_;
  std::unique_ptr<RedisServerProcess> server_;
};

TEST_F(RedisTlsTest, VerifiedConnectionByNameAndByAddress) {
  RedisConnectOptions options = server_->connect_options();
  ASSERT_TRUE(options.tls);
  for (std::string name : {"localhost", ""}) {  // "": the endpoint's address, 127.0.0.1
    options.tls_server_name = name;
    RedisConnection conn(io_, options);
    Status s = Connect(conn);
    ASSERT_TRUE(s.ok()) << "name '" << name << "': " << s.ToString();
    std::optional<Result<RedisReply>> reply;
    conn.Send({"PING"}, [&](Result<RedisReply> r) { reply = r; });
    ASSERT_TRUE(RunUntil(
        io_, [&] { return reply.has_value(); }, "PING over TLS"));
    ASSERT_TRUE(reply->ok()) << reply->status().ToString();
    EXPECT_TRUE((*reply)->Is("PONG"));
  }
}

TEST_F(RedisTlsTest, ParsedRedissUrlConnects) {
  Result<RedisUrl> url = ParseRedisUrl(server_->url());
  ASSERT_TRUE(url.ok()) << url.status().ToString();
  ASSERT_TRUE(url->tls());
  RedisConnectOptions options = RedisConnectOptions::ForUrl(*url, url->endpoints[0]);
  options.tls_ca_file = certs_.ca_file;
  RedisConnection conn(io_, options);
  EXPECT_TRUE(Connect(conn).ok());
}

TEST_F(RedisTlsTest, WrongCaIsRefused) {
  RedisConnectOptions options = server_->connect_options();
  options.tls_ca_file = certs_.other_ca_file;
  RedisConnection conn(io_, options);
  Status s = Connect(conn);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("TLS handshake failed"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("certificate verify failed"), std::string::npos) << s.message();
}

TEST_F(RedisTlsTest, SystemCasDoNotTrustTheTestCa) {
  RedisConnectOptions options = server_->connect_options();
  options.tls_ca_file.clear();
  RedisConnection conn(io_, options);
  Status s = Connect(conn);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("certificate verify failed"), std::string::npos) << s.message();
}

TEST_F(RedisTlsTest, WrongHostNameIsRefused) {
  RedisConnectOptions options = server_->connect_options();
  options.tls_server_name = "redis.example.org";
  RedisConnection conn(io_, options);
  Status s = Connect(conn);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("expected name 'redis.example.org'"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("certificate verify failed"), std::string::npos) << s.message();
}

TEST_F(RedisTlsTest, UnreadableCaFileIsNamed) {
  RedisConnectOptions options = server_->connect_options();
  options.tls_ca_file = dir_ + "/missing.pem";
  RedisConnection conn(io_, options);
  Status s = Connect(conn);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("cannot load the CA file '" + dir_ + "/missing.pem'"),
            std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace bulkhead
