// Reading a file that holds key material (a private key PEM, an env file with a private key).
#pragma once

#include <string>
#include <string_view>

#include "bulkhead/util/status.h"

namespace bulkhead {

// The whole file. Errors name the file as "cannot read <what> file <path>: <reason>": NotFound
// when it does not exist, PermissionDenied when it may not be read, Unavailable otherwise. The
// caller wipes the text (OPENSSL_cleanse) once it has read the key from it.
Result<std::string> ReadSecretFile(const std::string& path, std::string_view what);

}  // namespace bulkhead
