#include "bulkhead/protocol/pwdhash.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include "bulkhead/util/hex.h"

namespace bulkhead {

std::string PasswordHash(std::string_view password, std::string_view salt, int iterations) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  std::string input;
  input.reserve(password.size() + salt.size());
  input.append(password).append(salt);
  SHA256(reinterpret_cast<const unsigned char*>(input.data()), input.size(), digest);
  for (int i = 1; i < iterations; ++i) {
    SHA256(digest, sizeof(digest), digest);
  }
  return HexLower(digest, sizeof(digest));
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace bulkhead
