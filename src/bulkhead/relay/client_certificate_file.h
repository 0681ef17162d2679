// Reading an APNs client certificate (certificate-based authentication, Apple "Establishing a
// certificate-based connection to APNs") from the file Keychain Access exports: PKCS#12 (.p12),
// possibly password-protected, or PEM holding the certificate and its unencrypted key.
// Keychain exports older than macOS 14 protect .p12 files with RC2-40 and 3DES, which OpenSSL 3
// reads only through its `legacy` provider: it is loaded when the default one fails; when it
// cannot be, the error says how to convert the file.
#pragma once

#include <memory>
#include <string>

#include "bulkhead/transport/transport.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

// `password` may be empty. InvalidArgument names the file and the problem (a wrong password, no
// key in it, legacy ciphers that cannot be read) and never holds key material.
Result<std::shared_ptr<const ClientCertificate>> LoadClientCertificate(const std::string& path,
                                                                       const std::string& password);

// The same from the file's bytes (`what` names it in errors).
Result<std::shared_ptr<const ClientCertificate>> ReadClientCertificate(std::string_view bytes,
                                                                       const std::string& password,
                                                                       const std::string& what);

}  // namespace bulkhead
