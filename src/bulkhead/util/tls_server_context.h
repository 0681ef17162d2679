// TlsServerContext: the certificate and private key that the listeners serve over TLS, and their
// reload. TLS 1.2 or newer with OpenSSL's default ciphers. Reload() reads the files again: on
// success connections accepted from then on use the new certificate while established ones keep
// theirs; on failure the old certificate stays in use.
// Threading: not thread-safe; the event loop's (SIGHUP is handled there).
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <string>

#include "bulkhead/util/status.h"

namespace bulkhead {

class TlsServerContext {
 public:
  // InvalidArgument naming the file and OpenSSL's reason when a file is missing, unreadable, not
  // PEM, or the key does not match the certificate.
  static Result<std::unique_ptr<TlsServerContext>> Load(std::string cert_file,
                                                        std::string key_file);

  Status Reload();

  // The context for a new connection; stays valid while the connection holds it.
  std::shared_ptr<boost::asio::ssl::context> current() const { return current_; }
  const std::string& cert_file() const { return cert_file_; }
  const std::string& key_file() const { return key_file_; }
  // "CN=…, expires 2027-01-01T00:00:00Z" for logs.
  const std::string& description() const { return description_; }

 private:
  TlsServerContext(std::string cert_file, std::string key_file)
      : cert_file_(std::move(cert_file)), key_file_(std::move(key_file)) {}

  const std::string cert_file_;
  const std::string key_file_;
  std::shared_ptr<boost::asio::ssl::context> current_;
  std::string description_;
};

}  // namespace bulkhead
