#include "bulkhead/dispatch/store_key_ring.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <memory>
#include <optional>
#include <string>

#include "bulkhead/dispatch/testing/store_timing.h"

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

// Each test runs with the store answering inline and deferred (dispatch/testing/store_timing.h).
class StoreKeyRingTest : public ::testing::TestWithParam<StoreTiming> {
 protected:
  void SetUp() override {
    store_ = OpenTimedStore(GetParam(), io_);
    ASSERT_TRUE(Open(registry_).ok());
  }
  Status Open(StoreKeyRing& ring) {
    return Await<Status>(io_, "Open", [&](std::function<void(Status)> done) {
      ring.Open(*store_, std::move(done));
    });
  }
  Result<StoreKeyRing::AddResult> Add(const std::string& key_id, const std::string& pem) {
    return Await<Result<StoreKeyRing::AddResult>>(
        io_, "Add", [&](std::function<void(Result<StoreKeyRing::AddResult>)> done) {
          registry_.Add(key_id, pem, std::move(done));
        });
  }
  Status Remove(const std::string& key_id) {
    return Await<Status>(io_, "Remove", [&](std::function<void(Status)> done) {
      registry_.Remove(key_id, std::move(done));
    });
  }
  // Waits for a store change made behind the registry's back.
  void Expect(const std::string& what, const std::function<void(Store::Done)>& change) {
    Status s = Await<Status>(io_, what, change);
    ASSERT_TRUE(s.ok()) << what << ": " << s.ToString();
  }

  boost::asio::io_context io_;
  std::unique_ptr<Store> store_;
  StoreKeyRing registry_;
};

TEST_P(StoreKeyRingTest, AddFindReplaceRemove) {
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

TEST_P(StoreKeyRingTest, RefusesBadKeysAndKeyIdsWithClearMessages) {
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
  auto stored = Await<Result<std::vector<SigningKeyStore::StoredSigningKey>>>(
      io_, "SigningKeyStore::List",
      [&](SigningKeyStore::SigningKeysCallback cb) { store_->signing_keys().List(cb); });
  ASSERT_TRUE(stored.ok());
  EXPECT_TRUE(stored->empty()) << "nothing refused reaches the store";
}

TEST_P(StoreKeyRingTest, OpenLoadsStoredKeysAndSkipsUnreadableOnes) {
  ASSERT_TRUE(Add(kAlice, RsaPem()).ok());
  Expect("a broken key's write", [&](Store::Done done) {
    store_->signing_keys().Put("https://broken.example/actor#key", "not a key", std::move(done));
  });
  StoreKeyRing reopened;
  ASSERT_TRUE(Open(reopened).ok());
  ASSERT_EQ(reopened.List().size(), 1u);
  EXPECT_EQ(reopened.List()[0].key_id, kAlice);
  EXPECT_TRUE(reopened.Find(kAlice));
  EXPECT_FALSE(reopened.Find("https://broken.example/actor#key"));
}

TEST_P(StoreKeyRingTest, FlushKeepsKeys) {
  ASSERT_TRUE(Add(kAlice, RsaPem()).ok());
  Expect("FLUSH", [&](Store::Done done) { store_->Flush(std::move(done)); });
  StoreKeyRing reopened;
  ASSERT_TRUE(Open(reopened).ok());
  EXPECT_TRUE(reopened.Find(kAlice));
}

TEST_P(StoreKeyRingTest, AnswersAfterTheRegistryIsGoneAreDropped) {
  ASSERT_TRUE(Add(kAlice, RsaPem()).ok());
  auto answered = std::make_shared<int>(0);
  {
    StoreKeyRing ring;
    ring.Open(*store_, [answered](Status) { ++*answered; });
    Settle(io_);
    ASSERT_EQ(*answered, 1);
    ring.Add("https://social.example/users/bob#key", RsaPem(),
             [answered](Result<StoreKeyRing::AddResult>) { ++*answered; });
    ring.Remove(kAlice, [answered](Status) { ++*answered; });
  }
  Settle(io_);
  // Inline, both answered inside their calls; deferred, neither runs on the destroyed registry.
  EXPECT_EQ(*answered, GetParam() == StoreTiming::kInline ? 3 : 1);
}

INSTANTIATE_TEST_SUITE_P(StoreTimings, StoreKeyRingTest, kBothTimings, StoreTimingName);

}  // namespace
}  // namespace bulkhead
