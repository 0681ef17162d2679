// Bearer-token authentication for the HTTP API's sensitive routes (signing keys, worker control).
//
// When the server has a password, a request must carry `Authorization: Bearer <password>`;
// otherwise it is answered 401 with `WWW-Authenticate: Bearer realm="bulkhead"` and a JSON error,
// and the wrapped handler never runs. Without a password every request passes (loopback-only
// deployments, as for the Faktory port). The comparison takes the same time whatever the token.
#pragma once

#include <string>
#include <string_view>

#include "bulkhead/http/http_server.h"

namespace bulkhead {

// True when `authorization` (the header's value, possibly empty) is "Bearer <password>", or when
// `password` is empty. Constant time in the token's content and length.
bool BearerTokenMatches(std::string_view authorization, std::string_view password);

// Wraps `handler` so that it runs only for requests BearerTokenMatches admits.
HttpServer::Handler RequireBearer(std::string password, HttpServer::Handler handler);

}  // namespace bulkhead
