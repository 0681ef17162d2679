// ClassifyCurlFailure: libcurl's outcome of a failed transfer → TransportError.
#include "bulkhead/transport/curl_error.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace bulkhead {
namespace {

CurlFailure Failure(CURLcode code, std::string detail = "libcurl says no") {
  CurlFailure f;
  f.code = code;
  f.detail = std::move(detail);
  return f;
}

TransportError Kind(const CurlFailure& f) { return ClassifyCurlFailure(f).error; }

TEST(ClassifyCurlFailureTest, ARefusedConnectionIsAnSsrfRefusalWhenTheSocketHookSaidSo) {
  CurlFailure refused = Failure(CURLE_COULDNT_CONNECT);
  HttpResponse r = ClassifyCurlFailure(refused);
  EXPECT_EQ(r.error, TransportError::kConnectRefused);
  EXPECT_EQ(r.error_message, "libcurl says no");
  refused.ssrf_refusal = "address 10.0.0.1 is in 10.0.0.0/8 (private)";
  r = ClassifyCurlFailure(refused);
  EXPECT_EQ(r.error, TransportError::kSsrfRefused);
  EXPECT_EQ(r.error_message, "address 10.0.0.1 is in 10.0.0.0/8 (private)");
}

TEST(ClassifyCurlFailureTest, ATimeoutIsTheConnectDeadlineTheLowSpeedCutOrTheTotal) {
  CurlFailure timeout = Failure(CURLE_OPERATION_TIMEDOUT, "Operation too slow. Less than 1 bytes");
  EXPECT_EQ(Kind(timeout), TransportError::kConnectTimeout) << "not connected yet";
  timeout.connected = true;
  EXPECT_EQ(Kind(timeout), TransportError::kLowSpeed);
  timeout.detail = "Operation timed out after 10000 milliseconds";
  EXPECT_EQ(Kind(timeout), TransportError::kTimeoutTotal);
}

TEST(ClassifyCurlFailureTest, ATlsHandshakeResetByThePeerIsAReset) {
  CurlFailure handshake = Failure(CURLE_SSL_CONNECT_ERROR);
  EXPECT_EQ(Kind(handshake), TransportError::kTls);
  handshake.os_errno = ECONNRESET;
  EXPECT_EQ(Kind(handshake), TransportError::kReset);
  handshake.os_errno = EPIPE;
  EXPECT_EQ(Kind(handshake), TransportError::kReset);
}

TEST(ClassifyCurlFailureTest, EachFamilyOfCodesHasItsKind) {
  EXPECT_EQ(Kind(Failure(CURLE_COULDNT_RESOLVE_HOST)), TransportError::kDns);
  for (CURLcode tls :
       {CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
        CURLE_SSL_CACERT_BADFILE, CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_USE_SSL_FAILED}) {
    EXPECT_EQ(Kind(Failure(tls)), TransportError::kTls) << curl_easy_strerror(tls);
  }
  for (CURLcode reset : {CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE,
                         CURLE_HTTP2_STREAM, CURLE_HTTP2}) {
    EXPECT_EQ(Kind(Failure(reset)), TransportError::kReset) << curl_easy_strerror(reset);
  }
  EXPECT_EQ(Kind(Failure(CURLE_UNSUPPORTED_PROTOCOL)), TransportError::kSsrfRefused);
}

TEST(ClassifyCurlFailureTest, AnyOtherCodeIsOtherNamedByLibcurl) {
  HttpResponse r = ClassifyCurlFailure(Failure(CURLE_OUT_OF_MEMORY, "detail"));
  EXPECT_EQ(r.error, TransportError::kOther);
  EXPECT_EQ(r.error_message, std::string(curl_easy_strerror(CURLE_OUT_OF_MEMORY)) + ": detail");
  EXPECT_EQ(r.status, 0);
}

}  // namespace
}  // namespace bulkhead
