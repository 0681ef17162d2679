#include "bulkhead/client/tls_client.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <cerrno>
#include <cstring>

namespace bulkhead {
namespace {

std::string ErrorQueueText() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out;
}

bool IsIpAddress(const std::string& host) {
  unsigned char buf[16];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

}  // namespace

Result<std::unique_ptr<TlsClient>> TlsClient::Handshake(int fd, const std::string& host,
                                                        const std::string& ca_file) {
  ERR_clear_error();
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (ctx == nullptr) return Status::Internal("TLS: " + ErrorQueueText());
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  // bulkhead (as Faktory) closes the TCP connection after END without a close_notify.
  SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  int loaded = ca_file.empty() ? SSL_CTX_set_default_verify_paths(ctx)
                               : SSL_CTX_load_verify_locations(ctx, ca_file.c_str(), nullptr);
  if (loaded != 1) {
    std::string why = ErrorQueueText();
    SSL_CTX_free(ctx);
    return Status::InvalidArgument(
        "TLS: cannot load the CA certificates" +
        (ca_file.empty() ? std::string(" of the system") : " " + ca_file) + ": " + why);
  }
  SSL* ssl = SSL_new(ctx);
  std::unique_ptr<TlsClient> client(new TlsClient(ctx, ssl));
  if (ssl == nullptr) return Status::Internal("TLS: " + ErrorQueueText());
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  if (IsIpAddress(host)) {
    X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str());
  } else {
    SSL_set_tlsext_host_name(ssl, host.c_str());
    X509_VERIFY_PARAM_set1_host(param, host.c_str(), 0);
  }
  SSL_set_fd(ssl, fd);
  if (SSL_connect(ssl) != 1) {
    long verify = SSL_get_verify_result(ssl);
    std::string why =
        verify != X509_V_OK ? X509_verify_cert_error_string(verify) : ErrorQueueText();
    if (why.empty()) why = errno != 0 ? std::strerror(errno) : "the server closed the connection";
    ERR_clear_error();
    return Status::Unavailable("TLS handshake with " + host + " failed: " + why);
  }
  return client;
}

TlsClient::~TlsClient() {
  if (ssl_ != nullptr) SSL_free(ssl_);
  if (ctx_ != nullptr) SSL_CTX_free(ctx_);
}

Status TlsClient::WriteAll(std::string_view bytes) {
  while (!bytes.empty()) {
    size_t written = 0;
    ERR_clear_error();
    if (SSL_write_ex(ssl_, bytes.data(), bytes.size(), &written) == 1) {
      bytes.remove_prefix(written);
      continue;
    }
    int err = SSL_get_error(ssl_, 0);
    if (err == SSL_ERROR_WANT_WRITE || err == SSL_ERROR_WANT_READ) {
      return Status::Unavailable("write timed out");
    }
    return Status::Unavailable("TLS write failed: " + ErrorQueueText());
  }
  return Status::Ok();
}

Result<size_t> TlsClient::Read(char* data, size_t size) {
  size_t n = 0;
  ERR_clear_error();
  if (SSL_read_ex(ssl_, data, size, &n) == 1) return n;
  int err = SSL_get_error(ssl_, 0);
  if (err == SSL_ERROR_ZERO_RETURN) return size_t{0};
  if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
    return Status::Unavailable("timed out waiting for a reply");
  }
  if (err == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) return size_t{0};  // TCP close
  return Status::Unavailable("TLS read failed: " + ErrorQueueText());
}

}  // namespace bulkhead
