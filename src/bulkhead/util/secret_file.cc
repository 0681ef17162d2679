#include "bulkhead/util/secret_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace bulkhead {

Result<std::string> ReadSecretFile(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    int err = errno;
    std::string msg =
        "cannot read " + std::string(what) + " file " + path + ": " + std::strerror(err);
    if (err == ENOENT) return Status::NotFound(msg);
    if (err == EACCES) return Status::PermissionDenied(msg);
    return Status::Unavailable(msg);
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

}  // namespace bulkhead
