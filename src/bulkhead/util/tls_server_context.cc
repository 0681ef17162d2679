#include "bulkhead/util/tls_server_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

namespace bulkhead {

namespace ssl = boost::asio::ssl;

namespace {

// OpenSSL's first queued error as text, for messages; clears the queue.
std::string OpenSslReason(const boost::system::error_code& ec) {
  std::string reason = ec.message();
  unsigned long e = ERR_get_error();
  if (e != 0) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    reason = buf;
  }
  ERR_clear_error();
  return reason;
}

std::string Describe(SSL_CTX* ctx) {
  X509* cert = SSL_CTX_get0_certificate(ctx);
  if (cert == nullptr) return "no certificate";
  char subject[256] = {0};
  X509_NAME_oneline(X509_get_subject_name(cert), subject, sizeof(subject) - 1);
  std::string out = subject;
  const ASN1_TIME* not_after = X509_get0_notAfter(cert);
  struct tm t {};
  if (not_after != nullptr && ASN1_TIME_to_tm(not_after, &t) == 1) {
    char when[32];
    std::strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &t);
    out += ", expires ";
    out += when;
  }
  return out;
}

Result<std::shared_ptr<ssl::context>> Build(const std::string& cert_file,
                                            const std::string& key_file) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  boost::system::error_code ec;
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                       ssl::context::single_dh_use,
                   ec);
  SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION);
  ctx->use_certificate_chain_file(cert_file, ec);
  if (ec) {
    return Status::InvalidArgument("TLS certificate " + cert_file + ": " + OpenSslReason(ec));
  }
  ctx->use_private_key_file(key_file, ssl::context::pem, ec);
  if (ec) {
    std::string reason = OpenSslReason(ec);
    if (reason.find("mismatch") != std::string::npos) {
      return Status::InvalidArgument("TLS private key " + key_file +
                                     " does not match the certificate " + cert_file);
    }
    return Status::InvalidArgument("TLS private key " + key_file + ": " + reason);
  }
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
    ERR_clear_error();
    return Status::InvalidArgument("TLS private key " + key_file +
                                   " does not match the certificate " + cert_file);
  }
  return ctx;
}

}  // namespace

Result<std::unique_ptr<TlsServerContext>> TlsServerContext::Load(std::string cert_file,
                                                                 std::string key_file) {
  std::unique_ptr<TlsServerContext> t(
      new TlsServerContext(std::move(cert_file), std::move(key_file)));
  Status s = t->Reload();
  if (!s.ok()) return s;
  return t;
}

Status TlsServerContext::Reload() {
  auto ctx = Build(cert_file_, key_file_);
  if (!ctx.ok()) return ctx.status();
  current_ = std::move(*ctx);
  description_ = Describe(current_->native_handle());
  return Status::Ok();
}

}  // namespace bulkhead
