// The mapping from libcurl's outcome of a failed transfer to the transport's TransportError kinds
// (see transport.h), and the failed HttpResponse that carries one.
#pragma once

#include <curl/curl.h>

#include <string>

#include "bulkhead/transport/transport.h"

namespace bulkhead {

// A response that carries only `error` and `message`.
HttpResponse ErrorResponse(TransportError error, std::string message);

// What is known about a failed transfer besides libcurl's code.
struct CurlFailure {
  CURLcode code = CURLE_OK;
  long os_errno = 0;         // CURLINFO_OS_ERRNO
  std::string detail;        // libcurl's error buffer, or curl_easy_strerror(code) when empty
  bool connected = false;    // the connection was established (CURLOPT_PREREQFUNCTION ran)
  std::string ssrf_refusal;  // why the open-socket hook refused an address; empty if it did not
};

// The error response for a failed transfer: its kind, and a message for the dead reason.
HttpResponse ClassifyCurlFailure(const CurlFailure& failure);

}  // namespace bulkhead
