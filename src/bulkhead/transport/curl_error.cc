#include "bulkhead/transport/curl_error.h"

#include <cerrno>
#include <utility>

namespace bulkhead {

HttpResponse ErrorResponse(TransportError error, std::string message) {
  HttpResponse r;
  r.error = error;
  r.error_message = std::move(message);
  return r;
}

HttpResponse ClassifyCurlFailure(const CurlFailure& failure) {
  const std::string& detail = failure.detail;
  bool reset_errno = failure.os_errno == ECONNRESET || failure.os_errno == EPIPE;
  switch (failure.code) {
    case CURLE_COULDNT_CONNECT:
      if (!failure.ssrf_refusal.empty()) {
        return ErrorResponse(TransportError::kSsrfRefused, failure.ssrf_refusal);
      }
      return ErrorResponse(TransportError::kConnectRefused, detail);
    case CURLE_COULDNT_RESOLVE_HOST:
      return ErrorResponse(TransportError::kDns, detail);
    case CURLE_OPERATION_TIMEDOUT:
      if (!failure.connected) return ErrorResponse(TransportError::kConnectTimeout, detail);
      if (detail.find("too slow") != std::string::npos) {
        return ErrorResponse(TransportError::kLowSpeed, detail);
      }
      return ErrorResponse(TransportError::kTimeoutTotal, detail);
    case CURLE_SSL_CONNECT_ERROR:
      if (reset_errno) return ErrorResponse(TransportError::kReset, detail);
      return ErrorResponse(TransportError::kTls, detail);
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_USE_SSL_FAILED:
      return ErrorResponse(TransportError::kTls, detail);
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2_STREAM:
    // "Error in the HTTP2 framing layer": the connection's HTTP/2 session broke under the stream
    // (e.g. the peer ended it mid-exchange), not a fault of the request.
    case CURLE_HTTP2:
      return ErrorResponse(TransportError::kReset, detail);
    case CURLE_UNSUPPORTED_PROTOCOL:
      return ErrorResponse(TransportError::kSsrfRefused, detail);
    default:
      return ErrorResponse(TransportError::kOther,
                           std::string(curl_easy_strerror(failure.code)) + ": " + detail);
  }
}

}  // namespace bulkhead
