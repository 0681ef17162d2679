// Files replaced atomically and durably: written beside their final name, synced, renamed over it,
// and the directory synced (rename(2) is atomic; fsync(2) of the directory makes the rename itself
// survive a power loss). Used by the online backup and by `bulkhead restore`.
#pragma once

#include <string>

#include "bulkhead/util/status.h"

namespace bulkhead {

// Creates (or truncates) `path` with mode 0600, whatever the umask, without following a symbolic
// link at `path`. InvalidArgument naming `path` and the system's error when it cannot.
Status CreatePrivateFile(const std::string& path);

// fsync(2) of the file at `path`. Unavailable naming it on failure.
Status SyncFile(const std::string& path);

// rename(2) of `from` over `to`, then fsync(2) of `to`'s directory. Unavailable naming both.
Status DurableRename(const std::string& from, const std::string& to);

// True when both paths name the same file (device and inode); false when either is missing.
bool SameFile(const std::string& a, const std::string& b);

}  // namespace bulkhead
