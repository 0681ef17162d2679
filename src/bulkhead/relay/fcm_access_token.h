// FcmAccessToken: the OAuth 2.0 access token FCM HTTP v1 requests carry (Google, "Authorize send
// requests"; RFC 7523 §2.1, the JWT bearer grant): a JWT signed RS256 with the service account's
// private key,
//   header {"alg": "RS256", "typ": "JWT", "kid": private_key_id}, claims {"iss": client_email,
//   "scope": "https://www.googleapis.com/auth/firebase.messaging", "aud": token_uri,
//   "iat": now, "exp": now + 3600},
// POSTed to the account's token_uri as `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&
// assertion=<JWT>`; the answer's access_token is kept until 5 minutes before its expires_in.
// One exchange at a time: requests that need a token while one is fetched wait for it. A failed
// exchange is not tried again for 10 s (its error answers meanwhile), so a refused account costs
// one request per 10 s, not one per message. Event loop thread only.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bulkhead/encoders/http_signature.h"
#include "bulkhead/transport/transport.h"
#include "bulkhead/util/clock.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

// The fields of a Google service account key file (JSON) that sending needs.
struct ServiceAccount {
  std::string project_id;
  std::string client_email;
  std::string private_key_id;
  std::string token_uri;
  SigningKey key;
};

// Reads the key file's text. InvalidArgument names the missing or bad field, never the key.
Result<ServiceAccount> ParseServiceAccount(std::string_view json);

// The signed assertion for `account` at `now` (exposed for tests).
Result<std::string> FcmAssertion(const ServiceAccount& account, const std::string& audience,
                                 TimePoint now);

inline constexpr char kFcmScope[] = "https://www.googleapis.com/auth/firebase.messaging";

class FcmAccessToken {
 public:
  using Done = std::function<void(Result<std::string>)>;

  // `token_url`: where to exchange the assertion (empty: the account's token_uri, which is then
  // also the JWT's aud). `transport` and `clock` must outlive it.
  FcmAccessToken(ServiceAccount account, std::string token_url, Transport& transport,
                 const Clock& clock);
  ~FcmAccessToken();

  // The access token, now if one is kept, else after an exchange. An error is an Unavailable
  // (the endpoint failed) or PermissionDenied (it refused the account) naming the cause.
  void Get(Done done);
  // The service said the token is no longer valid (401): the next Get exchanges again.
  void Invalidate() { token_.clear(); }

  const ServiceAccount& account() const { return account_; }
  uint64_t exchanges() const { return exchanges_; }

 private:
  void Exchange();
  void Finish(Result<std::string> result);

  ServiceAccount account_;
  std::string token_url_;
  Transport& transport_;
  const Clock& clock_;
  std::string token_;
  TimePoint valid_until_{};
  std::vector<Done> waiting_;
  std::optional<Status> failure_;
  TimePoint failed_at_{};
  uint64_t exchanges_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace bulkhead
