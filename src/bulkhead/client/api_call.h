// One request to a running server's HTTP API from a client subcommand (`keys`, `backup`), with
// libcurl: BULKHEAD_PASSWORD sent as `Authorization: Bearer`, never through a proxy, https://
// verified (against `ca_file`, else the system's CAs), no redirects.
#pragma once

#include <string>

#include "bulkhead/util/status.h"

namespace bulkhead {

struct ApiResponse {
  long status = 0;
  std::string body;
};

// `method` to `url` with `body` (sent for PUT and POST) of type `content_type`. Errors are about
// reaching the server (Unavailable naming the URL and pointing at --http); any HTTP status is
// returned. `timeout_s` bounds the whole request.
Result<ApiResponse> CallApi(const std::string& method, const std::string& url,
                            const std::string& body, const std::string& content_type,
                            const std::string& ca_file, long timeout_s = 30);

// The Status for a response that is not the success expected: `what`, then the API's {"error"}
// text (or the body) and the HTTP status; 401 says to set (or fix) BULKHEAD_PASSWORD.
Status ApiError(const ApiResponse& r, const std::string& what);

// "http://HOST:PORT" from --http's HOST:PORT or URL (http:// or https://), without a final '/'.
std::string ApiBaseUrl(const std::string& http_address);

}  // namespace bulkhead
