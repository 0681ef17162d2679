#include "bulkhead/dashboard/basic_auth.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <string>

#include "bulkhead/util/ascii.h"
#include "bulkhead/util/base64.h"

namespace bulkhead::dashboard {

bool BasicAuthMatches(std::string_view authorization, std::string_view password) {
  if (password.empty()) return true;
  constexpr std::string_view kScheme = "basic ";
  if (authorization.size() <= kScheme.size()) return false;
  if (!EqualsIgnoreCase(authorization.substr(0, kScheme.size()), kScheme)) return false;
  std::string_view encoded = authorization.substr(kScheme.size());
  while (!encoded.empty() && encoded.front() == ' ') encoded.remove_prefix(1);
  auto decoded = Base64Decode(encoded);
  if (!decoded.ok()) return false;
  size_t colon = decoded->find(':');
  if (colon == std::string::npos) return false;
  std::string_view given = std::string_view(*decoded).substr(colon + 1);
  // Digests keep the time independent of where the strings differ and of their lengths.
  unsigned char a[SHA256_DIGEST_LENGTH], b[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(given.data()), given.size(), a);
  SHA256(reinterpret_cast<const unsigned char*>(password.data()), password.size(), b);
  return CRYPTO_memcmp(a, b, sizeof(a)) == 0;
}

}  // namespace bulkhead::dashboard
