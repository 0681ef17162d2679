#include "bulkhead/dispatch/store_key_ring.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <memory>
#include <optional>
#include <string>

namespace bulkhead {
namespace {

constexpr char kAlice[] = "https://social.example/users/alice#main-key";

// A PEM private key of `type` ("RSA" with `bits`, or "EC").
std::string PrivatePem(const char* type, size_t bits = 2048) {
  EVP_PKEY* key = std::string(type) == "EC" ? EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256")
                                            : EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", bits);
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long len = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<size_t>(len));
  BIO_free(bio);
  EVP_PKEY_free(key);
  return pem;
}

const std::string& RsaPem() {
  static const std::string pem = PrivatePem("RSA");
  return pem;
}

class StoreKeyRingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = OpenStoreFromUrl("memory:", [](std::function<void()> fn) { fn(); });
    ASSERT_TRUE(store.ok());
    store_ = std::move(*store);
    ASSERT_TRUE(registry_.Open(*store_).ok());
  }
  Result<StoreKeyRing::AddResult> Add(const std::string& key_id, const std::string& pem) {
    std::optional<Result<StoreKeyRing::AddResult>> out;
    registry_.Add(key_id, pem, [&](Result<StoreKeyRing::AddResult> r) { out = std::move(r); });
    EXPECT_TRUE(out.has_value()) << "the memory store answers inline";
    return std::move(*out);
  }
  Status Remove(const std::string& key_id) {
    std::optional<Status> out;
    registry_.Remove(key_id, [&](Status s) { out = s; });
    EXPECT_TRUE(out.has_value());
    return *out;
  }

  std::unique_ptr<Store> store_;
  StoreKeyRing registry_;
};

TEST_F(StoreKeyRingTest, AddFindReplaceRemove) {
  EXPECT_FALSE(registry_.Find(kAlice));
  auto added = Add(kAlice, RsaPem());
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_TRUE(added->created);
  EXPECT_EQ(added->key.key_id, kAlice);
  EXPECT_EQ(added->key.bits, 2048);
  EXPECT_EQ(added->key.public_key_pem.rfind("-----BEGIN PUBLIC KEY-----", 0), 0u);
  EXPECT_EQ(added->key.fingerprint.rfind("SHA256:", 0), 0u);
  ASSERT_TRUE(registry_.Find(kAlice));
  EXPECT_EQ(registry_.Find(kAlice)->PublicKeyPem(), added->key.public_key_pem);

  auto replaced = Add(kAlice, PrivatePem("RSA", 3072));
  ASSERT_TRUE(replaced.ok());
  EXPECT_FALSE(replaced->created);
  EXPECT_EQ(replaced->key.bits, 3072);
  ASSERT_EQ(registry_.List().size(), 1u);
  EXPECT_EQ(registry_.List()[0].bits, 3072);
  EXPECT_EQ(registry_.Describe(kAlice)->fingerprint, replaced->key.fingerprint);

  EXPECT_TRUE(Remove(kAlice).ok());
  EXPECT_FALSE(registry_.Find(kAlice));
  EXPECT_TRUE(registry_.List().empty());
  EXPECT_EQ(Remove(kAlice).code(), StatusCode::kNotFound);
}

TEST_F(StoreKeyRingTest, RefusesBadKeysAndKeyIdsWithClearMessages) {
  auto message = [&](const std::string& key_id, const std::string& pem) {
    auto r = Add(key_id, pem);
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    return r.status().message();
  };
  EXPECT_NE(message(kAlice, PrivatePem("RSA", 1024)).find("at least 2048 bits"), std::string::npos);
  EXPECT_NE(message(kAlice, PrivatePem("EC")).find("must be an RSA key"), std::string::npos);
  EXPECT_NE(message(kAlice, "hello").find("not PEM"), std::string::npos);
  EXPECT_NE(message("", RsaPem()).find("key id is empty"), std::string::npos);
  EXPECT_NE(message("a\"b", RsaPem()).find("'\"'"), std::string::npos);
  EXPECT_NE(message("a\nb", RsaPem()).find("control character"), std::string::npos);
  EXPECT_NE(message(std::string(3000, 'k'), RsaPem()).find("longer than"), std::string::npos);
  EXPECT_TRUE(registry_.List().empty());
  std::optional<Result<std::vector<Store::StoredSigningKey>>> stored;
  store_->ListSigningKeys([&](auto r) { stored = std::move(r); });
  EXPECT_TRUE((*stored)->empty()) << "nothing refused reaches the store";
}

TEST_F(StoreKeyRingTest, OpenLoadsStoredKeysAndSkipsUnreadableOnes) {
  ASSERT_TRUE(Add(kAlice, RsaPem()).ok());
  store_->PutSigningKey("https://broken.example/actor#key", "not a key", [](Status) {});
  StoreKeyRing reopened;
  ASSERT_TRUE(reopened.Open(*store_).ok());
  ASSERT_EQ(reopened.List().size(), 1u);
  EXPECT_EQ(reopened.List()[0].key_id, kAlice);
  EXPECT_TRUE(reopened.Find(kAlice));
  EXPECT_FALSE(reopened.Find("https://broken.example/actor#key"));
}

TEST_F(StoreKeyRingTest, FlushKeepsKeys) {
  ASSERT_TRUE(Add(kAlice, RsaPem()).ok());
  store_->Flush([](Status) {});
  StoreKeyRing reopened;
  ASSERT_TRUE(reopened.Open(*store_).ok());
  EXPECT_TRUE(reopened.Find(kAlice));
}

}  // namespace
}  // namespace bulkhead
