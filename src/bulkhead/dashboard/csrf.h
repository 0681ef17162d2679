// CsrfGuard: the token every state-changing form of the dashboard carries (a hidden field
// "csrf"). The token is HMAC-SHA256(per-process secret, principal), where the principal is the
// request's Authorization header (empty without a password): another site can make a browser send
// a POST with its credentials, but cannot read a page to learn the token. The secret is random per
// process, so tokens end with it. Thread-compatible; immutable after construction.
#pragma once

#include <string>
#include <string_view>

namespace bulkhead::dashboard {

class CsrfGuard {
 public:
  // With a fresh random 32-byte secret.
  CsrfGuard();
  // With `secret` (tests).
  explicit CsrfGuard(std::string secret) : secret_(std::move(secret)) {}

  // 64 lower-case hex digits.
  std::string TokenFor(std::string_view principal) const;
  // True when `token` is TokenFor(principal). Constant time in the token's content.
  bool Check(std::string_view principal, std::string_view token) const;

 private:
  std::string secret_;
};

}  // namespace bulkhead::dashboard
