#include "bulkhead/relay/client_certificate_file.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace bulkhead {
namespace {

// A self-signed certificate and key made by the openssl CLI in a fresh folder, exported as PEM,
// as a modern .p12 and as a legacy one (RC2-40 and 3DES, as Keychain Access wrote them).
class ClientCertificateFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("bulkhead-cert-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    Run("openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem -out cert.pem -days 2 "
        "-subj /CN=apns-test");
    std::ofstream(dir_ / "both.pem") << Read("cert.pem") << Read("key.pem");
    Run("openssl pkcs12 -export -in cert.pem -inkey key.pem -out modern.p12 -passout pass:s3cret");
    legacy_ = std::system(("cd " + dir_.string() +
                           " && openssl pkcs12 -export -legacy -in cert.pem -inkey key.pem "
                           "-out legacy.p12 -passout pass:s3cret >/dev/null 2>&1")
                              .c_str()) == 0;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void Run(const std::string& command) {
    std::string full = "cd " + dir_.string() + " && " + command + " >/dev/null 2>&1";
    ASSERT_EQ(std::system(full.c_str()), 0) << command;
  }
  std::string Path(const char* name) const { return (dir_ / name).string(); }
  std::string Read(const char* name) const {
    std::ifstream in(dir_ / name);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  std::filesystem::path dir_;
  bool legacy_ = false;
};

TEST_F(ClientCertificateFileTest, PemWithItsKey) {
  auto cert = LoadClientCertificate(Path("both.pem"), "");
  ASSERT_TRUE(cert.ok()) << cert.status().message();
  EXPECT_NE((*cert)->cert_pem.find("BEGIN CERTIFICATE"), std::string::npos);
  auto alone = LoadClientCertificate(Path("cert.pem"), "");
  ASSERT_FALSE(alone.ok());
  EXPECT_NE(alone.status().message().find("must hold the certificate and its private key"),
            std::string::npos);
}

TEST_F(ClientCertificateFileTest, ModernP12WithItsPassword) {
  auto cert = LoadClientCertificate(Path("modern.p12"), "s3cret");
  ASSERT_TRUE(cert.ok()) << cert.status().message();
  EXPECT_EQ((*cert)->cert_pem, Read("cert.pem"));
  EXPECT_NE((*cert)->key_pem.find("BEGIN PRIVATE KEY"), std::string::npos);
  auto wrong = LoadClientCertificate(Path("modern.p12"), "nope");
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("a wrong password"), std::string::npos);
  EXPECT_EQ(wrong.status().message().find("PRIVATE KEY"), std::string::npos);
}

TEST_F(ClientCertificateFileTest, LegacyP12ThroughTheLegacyProvider) {
  if (!legacy_) GTEST_SKIP() << "this openssl CLI cannot write a legacy .p12";
  auto cert = LoadClientCertificate(Path("legacy.p12"), "s3cret");
  ASSERT_TRUE(cert.ok()) << cert.status().message();
  EXPECT_EQ((*cert)->cert_pem, Read("cert.pem"));
}

TEST_F(ClientCertificateFileTest, MissingFileNamesIt) {
  auto cert = LoadClientCertificate(Path("absent.p12"), "");
  ASSERT_FALSE(cert.ok());
  EXPECT_NE(cert.status().message().find("absent.p12"), std::string::npos);
}

}  // namespace
}  // namespace bulkhead
