#include "bulkhead/dashboard/csrf.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cstdlib>

#include "bulkhead/util/hex.h"

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
  return HexLower(mac, len);
}

bool CsrfGuard::Check(std::string_view principal, std::string_view token) const {
  std::string want = TokenFor(principal);
  if (token.size() != want.size()) return false;
  return CRYPTO_memcmp(token.data(), want.data(), want.size()) == 0;
}

}  // namespace bulkhead::dashboard
