#include "bulkhead/http/bearer_auth.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include "bulkhead/util/ascii.h"

namespace bulkhead {
namespace {

constexpr std::string_view kScheme = "bearer";

}  // namespace

bool BearerTokenMatches(std::string_view authorization, std::string_view password) {
  if (password.empty()) return true;
  // Scheme names are case-insensitive (RFC 9110 §11.1); then one or more spaces.
  if (authorization.size() <= kScheme.size()) return false;
  if (!EqualsIgnoreCase(authorization.substr(0, kScheme.size()), kScheme)) return false;
  std::string_view token = authorization.substr(kScheme.size());
  if (token.front() != ' ') return false;
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  // Comparing digests keeps the time independent of where the strings differ and of their
  // lengths.
  unsigned char given[SHA256_DIGEST_LENGTH], want[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(token.data()), token.size(), given);
  SHA256(reinterpret_cast<const unsigned char*>(password.data()), password.size(), want);
  return CRYPTO_memcmp(given, want, sizeof(given)) == 0;
}

HttpServer::Handler RequireBearer(std::string password, HttpServer::Handler handler) {
  return [password = std::move(password), handler = std::move(handler)](const HttpRequestIn& req,
                                                                        HttpServer::Reply reply) {
    auto it = req.headers.find("authorization");
    std::string_view given = it == req.headers.end() ? std::string_view() : it->second;
    if (!BearerTokenMatches(given, password)) {
      HttpResponseOut r = HttpResponseOut::Error(
          401, given.empty() ? "this API needs Authorization: Bearer <the server's password>"
                             : "wrong bearer token");
      r.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"bulkhead\"");
      reply(std::move(r));
      return;
    }
    handler(req, std::move(reply));
  };
}

}  // namespace bulkhead
