#include "bulkhead/store/durable_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace bulkhead {
namespace {

Status SyncPath(const std::string& path, int flags) {
  int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return Status::Unavailable("cannot open " + path + ": " + std::strerror(errno));
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) return Status::Unavailable("cannot fsync " + path + ": " + std::strerror(err));
  return Status::Ok();
}

}  // namespace

Status CreatePrivateFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return Status::InvalidArgument("cannot create " + path + ": " + std::strerror(errno));
  // An existing file keeps its mode through O_CREAT: set it.
  int rc = ::fchmod(fd, 0600);
  int err = errno;
  ::close(fd);
  if (rc != 0) {
    return Status::InvalidArgument("cannot make " + path + " private: " + std::strerror(err));
  }
  return Status::Ok();
}

Status SyncFile(const std::string& path) { return SyncPath(path, O_RDONLY); }

Status DurableRename(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) {
    return Status::Unavailable("cannot rename " + from + " to " + to + ": " + std::strerror(errno));
  }
  std::string dir = std::filesystem::path(to).parent_path().string();
  return SyncPath(dir.empty() ? "." : dir, O_RDONLY | O_DIRECTORY);
}

bool SameFile(const std::string& a, const std::string& b) {
  struct stat sa {};
  struct stat sb {};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

}  // namespace bulkhead
