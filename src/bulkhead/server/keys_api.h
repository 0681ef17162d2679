// The HTTP API over the ActivityPub signing keys (StoreKeyRing):
//
//   PUT    /api/keys/<url-encoded key id>   body: the PEM private key
//            201 (created) or 200 (replaced), body: the key's JSON (below)
//            400 {"error": ...} naming the problem (not PEM, encrypted, not RSA, < 2048 bits,
//            bad key id, empty body)
//   GET    /api/keys                        200, [key JSON, ...] ordered by key id
//   GET    /api/keys/<url-encoded key id>   200 key JSON, 404
//   DELETE /api/keys/<url-encoded key id>   204, 404
//
// Key JSON: {"key_id", "algorithm": "rsa-sha256", "bits", "public_key_pem", "fingerprint"} — never
// the private key. With a password configured every route needs `Authorization: Bearer
// <password>` (bearer_auth.h). Request bodies are never logged.
#pragma once

#include <string>

#include "bulkhead/dispatch/store_key_ring.h"
#include "bulkhead/http/http_server.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

inline constexpr char kKeysApiPath[] = "/api/keys";

// Registers the routes above on `http`. `keys` must outlive `http`'s handlers.
void RegisterKeysApi(HttpServer& http, StoreKeyRing& keys, const std::string& password);

}  // namespace bulkhead
