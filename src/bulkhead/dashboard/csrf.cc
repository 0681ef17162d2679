#include "bulkhead/dashboard/csrf.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cstdlib>

namespace bulkhead::dashboard {

CsrfGuard::CsrfGuard() {
  secret_.resize(32);
  if (RAND_bytes(reinterpret_cast<unsigned char*>(secret_.data()), 32) != 1) std::abort();
}

std::string CsrfGuard::TokenFor(std::string_view principal) const {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret_.data(), static_cast<int>(secret_.size()),
       reinterpret_cast<const unsigned char*>(principal.data()), principal.size(), mac, &len);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += kHex[mac[i] >> 4];
    out += kHex[mac[i] & 15];
  }
  return out;
}

bool CsrfGuard::Check(std::string_view principal, std::string_view token) const {
  std::string want = TokenFor(principal);
  if (token.size() != want.size()) return false;
  return CRYPTO_memcmp(token.data(), want.data(), want.size()) == 0;
}

}  // namespace bulkhead::dashboard
