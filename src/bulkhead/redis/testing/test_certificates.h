// MakeTestCertificates (tests only): a throw-away CA and a server certificate it signed (for
// DNS:localhost and IP:127.0.0.1), plus an unrelated second CA, made with the `openssl` command in
// `dir`. For TLS tests against a RedisServerProcess.
#pragma once

#include <string>

#include "bulkhead/util/status.h"

namespace bulkhead {

struct TestCertificates {
  std::string ca_file;        // the CA that signed the server certificate
  std::string other_ca_file;  // a CA that signed nothing here
  std::string cert_file;      // server certificate (PEM)
  std::string key_file;       // its private key (PEM)
};

// Internal naming the failing openssl command when one fails.
Result<TestCertificates> MakeTestCertificates(const std::string& dir);

}  // namespace bulkhead
