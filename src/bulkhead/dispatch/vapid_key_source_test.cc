#include "bulkhead/dispatch/vapid_key_source.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace bulkhead {
namespace {

namespace fs = std::filesystem;

// A Mastodon-format pair (see encoders/vapid_test.cc: a 31-byte scalar, `=`-padded).
constexpr char kPrivate[] = "XbYDni16aOCDzlqiQzKwN5Gbe9-8rx-lmgOUBY-A1w==";
constexpr char kPublic[] =
    "BHLWOVoCus4gsxUKZigP_qOs3RYO_2pZcffGRq9n1BiAfVKodRiXh5UyipiNjbpkCIDh8FFbqwdykC_nNkPEneU=";

class VapidKeySourceTest : public ::testing::Test {
 protected:
  VapidKeySourceTest()
      : dir_(fs::temp_directory_path() /
             ("bulkhead_vapid_source_test_" + std::to_string(::getpid()))) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    config_.data_dir = dir_.string();
  }
  ~VapidKeySourceTest() override { fs::remove_all(dir_); }

  void Write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }
  static VapidKeyVariables Variables(const char* priv, const char* pub) {
    VapidKeyVariables v;
    if (priv) v.private_key = priv;
    if (pub) v.public_key = pub;
    return v;
  }

  fs::path dir_;
  Config config_;
};

// Mastodon's .env.production as its setup wizard writes it, with the forms dotenv accepts.
TEST_F(VapidKeySourceTest, ReadsTheVariablesFromAnEnvFile) {
  const std::string text = std::string("# Generated with mastodon:setup\n") +
                           "LOCAL_DOMAIN=social.example\r\n"
                           "SECRET_KEY_BASE=abc#not-a-comment\n"
                           "  export VAPID_PRIVATE_KEY = \"" +
                           kPrivate +
                           "\"\n"
                           "VAPID_PUBLIC_KEY=" +
                           kPublic +
                           "  # the public half\n"
                           "OTHER_VAPID_PRIVATE_KEY=ignored\n";
  VapidKeyVariables v = VapidKeyVariablesFromEnvFile(text, "/home/mastodon/live/.env.production");
  EXPECT_EQ(v.private_key, kPrivate);
  EXPECT_EQ(v.public_key, kPublic);
  EXPECT_EQ(v.origin, "/home/mastodon/live/.env.production");
  v = VapidKeyVariablesFromEnvFile("VAPID_PRIVATE_KEY=''\nVAPID_PUBLIC_KEY=\n", "f");
  EXPECT_FALSE(v.private_key) << "empty is unset";
  EXPECT_FALSE(v.public_key);
  v = VapidKeyVariablesFromEnvFile(std::string("VAPID_PRIVATE_KEY='") + kPrivate + "'", "f");
  EXPECT_EQ(v.private_key, kPrivate);
}

TEST_F(VapidKeySourceTest, VariablesGiveTheKeyOrSayWhatIsWrong) {
  auto key = VapidKeyFromVariables(Variables(kPrivate, kPublic));
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  ASSERT_TRUE(key->has_value());
  EXPECT_EQ((*key)->PublicKeyMastodonForm(), kPublic);
  key = VapidKeyFromVariables(Variables(nullptr, nullptr));
  ASSERT_TRUE(key.ok());
  EXPECT_FALSE(key->has_value()) << "not set: no key from the variables";

  EXPECT_EQ(VapidKeyFromVariables(Variables(nullptr, kPublic)).status().message(),
            "VAPID_PUBLIC_KEY is set but VAPID_PRIVATE_KEY is not (the environment): bulkhead "
            "needs the private key to sign");
  const std::string other = VapidKey::Generate()->PublicKeyMastodonForm();
  EXPECT_EQ(VapidKeyFromVariables(Variables(kPrivate, other.c_str())).status().message(),
            "VAPID_PUBLIC_KEY is not the public key of VAPID_PRIVATE_KEY (the environment)");
  EXPECT_EQ(VapidKeyFromVariables(Variables("A*AA", nullptr)).status().message(),
            "VAPID_PRIVATE_KEY is not base64url (invalid base64: unexpected character at offset "
            "1) (the environment)");
}

TEST_F(VapidKeySourceTest, AKeyFileMayHoldPemOrMastodonsLines) {
  const fs::path env = dir_ / "env.production";
  Write(env, std::string("VAPID_PRIVATE_KEY=") + kPrivate + "\nVAPID_PUBLIC_KEY=" + kPublic + "\n");
  Result<VapidKey> from_env = LoadVapidKeyFile(env.string());
  ASSERT_TRUE(from_env.ok()) << from_env.status().ToString();
  EXPECT_EQ(from_env->PublicKeyMastodonForm(), kPublic);

  const fs::path pem = dir_ / "copy.pem";
  ASSERT_TRUE(SaveVapidKey(*from_env, pem.string()).ok());
  struct stat st {};
  ASSERT_EQ(::stat(pem.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  Result<VapidKey> from_pem = LoadVapidKeyFile(pem.string());
  ASSERT_TRUE(from_pem.ok());
  EXPECT_EQ(from_pem->public_key(), from_env->public_key());

  Write(env, "LOCAL_DOMAIN=social.example\n");
  EXPECT_EQ(LoadVapidKeyFile(env.string()).status().message(),
            "VAPID key " + env.string() +
                ": holds neither a PEM private key nor a VAPID_PRIVATE_KEY= line");
  Write(env, std::string("VAPID_PRIVATE_KEY=") + kPrivate +
                 "\nVAPID_PUBLIC_KEY=" + VapidKey::Generate()->public_key_b64url() + "\n");
  EXPECT_EQ(LoadVapidKeyFile(env.string()).status().message(),
            "VAPID key " + env.string() + ": VAPID_PUBLIC_KEY is not the public key of " +
                "VAPID_PRIVATE_KEY (" + env.string() + ")");
  EXPECT_EQ(LoadVapidKeyFile((dir_ / "missing").string()).status().code(), StatusCode::kNotFound);
}

// The variables win over the file (as BULKHEAD_PASSWORD over `password`); the file is then not
// created, and a file holding another key is warned about by its public key only.
TEST_F(VapidKeySourceTest, TheVariablesWinOverTheKeyFile) {
  const fs::path file = dir_ / "vapid.pem";
  Result<ServerVapidKey> key = ResolveVapidKey(config_, Variables(kPrivate, kPublic), true);
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  EXPECT_EQ(key->key.PublicKeyMastodonForm(), kPublic);
  EXPECT_EQ(key->source, "VAPID_PRIVATE_KEY (the environment)");
  EXPECT_FALSE(key->created);
  EXPECT_FALSE(fs::exists(file)) << "no file generated when the environment holds the key";
  EXPECT_EQ(key->warning, "");

  Result<ServerVapidKey> generated = ResolveVapidKey(config_, VapidKeyVariables(), true);
  ASSERT_TRUE(generated.ok());
  EXPECT_TRUE(generated->created);
  EXPECT_EQ(generated->source, file.string());
  EXPECT_TRUE(fs::exists(file));

  key = ResolveVapidKey(config_, Variables(kPrivate, nullptr), true);
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(key->key.PublicKeyMastodonForm(), kPublic);
  EXPECT_NE(key->warning.find("VAPID_PRIVATE_KEY wins over " + file.string()), std::string::npos)
      << key->warning;
  EXPECT_NE(key->warning.find(generated->key.public_key_b64url()), std::string::npos);
  EXPECT_EQ(key->warning.find(kPrivate), std::string::npos);

  // Bad variables are an error, whatever the file holds.
  EXPECT_FALSE(ResolveVapidKey(config_, Variables("AAAA", nullptr), true).ok());
  // Without `create` a missing file is NotFound.
  config_.vapid_private_key_file = (dir_ / "elsewhere.pem").string();
  EXPECT_EQ(ResolveVapidKey(config_, VapidKeyVariables(), false).status().code(),
            StatusCode::kNotFound);
}

}  // namespace
}  // namespace bulkhead
