// TlsClient: the client side of TLS over an already connected, blocking socket, for the CLI's
// FaktoryClient. TLS 1.2 or newer; the server's certificate is verified against `ca_file` (empty:
// the system's trust store) and must name `host` (a DNS name, or an IP address in its
// subjectAltName). Reads and writes block, bounded by the socket's SO_RCVTIMEO / SO_SNDTIMEO.
// Threading: thread-compatible (one thread at a time), like the socket it wraps.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "bulkhead/util/status.h"

typedef struct ssl_st SSL;
typedef struct ssl_ctx_st SSL_CTX;

namespace bulkhead {

class TlsClient {
 public:
  // Runs the handshake over `fd` (not owned). Unavailable names the failure: the certificate
  // verification error ("unable to get local issuer certificate", "certificate has expired",
  // "hostname mismatch"), or the handshake error (e.g. the port does not speak TLS).
  static Result<std::unique_ptr<TlsClient>> Handshake(int fd, const std::string& host,
                                                      const std::string& ca_file);
  ~TlsClient();
  TlsClient(const TlsClient&) = delete;
  TlsClient& operator=(const TlsClient&) = delete;

  // Writes all of `bytes`. Unavailable on a timeout ("write timed out") or a broken connection.
  Status WriteAll(std::string_view bytes);
  // Reads up to `size` bytes: > 0 bytes read, 0 when the server closed the connection.
  // Unavailable on a timeout ("timed out waiting for a reply") or an error.
  Result<size_t> Read(char* data, size_t size);

 private:
  TlsClient(SSL_CTX* ctx, SSL* ssl) : ctx_(ctx), ssl_(ssl) {}
  SSL_CTX* ctx_;
  SSL* ssl_;
};

}  // namespace bulkhead
