// Restoring a `sqlite:` store from a backup (`bulkhead restore`, store/sqlite_backup.h), with the
// server stopped.
//
// RestoreSqliteStore(backup, store_path):
// 1. Refuses while a server has the store open: the server holds the file with PRAGMA
//    locking_mode=EXCLUSIVE, that is a POSIX lock on the file's lock-byte range
//    (https://www.sqlite.org/fileformat2.html#the_lock_byte_page, bytes 1073741824..1073742335;
//    https://www.sqlite.org/lockingv3.html). Restore takes that lock itself (fcntl F_SETLK on
//    the file, without opening the database or creating any file; StoreLockHolder names the
//    process when it is held) and holds it until step 4 is done, so a server starting meanwhile
//    cannot open the store it replaces.
// 2. Copies `backup` to STORE.restore (mode 0600) and checks the copy, not the original: PRAGMA
//    integrity_check, a meta.schema_version this bulkhead knows (older ones are upgraded by the
//    server when it opens the store), and counts what it holds. A check that fails leaves the
//    store untouched and removes the copy.
// 3. Moves the store it replaces aside with its side files (STORE -> STORE.before-restore,
//    STORE-wal -> STORE.before-restore-wal, STORE-commits -> STORE.before-restore-commits,
//    STORE-redo -> STORE.before-restore-redo), so the old store can still be opened, and neither
//    its commit number can refuse the restored one nor its redo log be committed into it.
// 4. Renames the copy to STORE (durable_file.h).
//
// What a restored server does with the jobs of the backup: every row is loaded as it was. Jobs
// reserved by a worker at backup time stay reserved until their reservation (reserve_for) ends,
// then the reservation reaper puts them back in their queue; an ACK or FAIL of the worker that
// held one is still accepted until then.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "bulkhead/util/status.h"

namespace bulkhead {

struct RestoreReport {
  int schema_version = 0;
  std::map<std::string, int64_t> jobs;  // by state name (JobStateName)
  int64_t signing_keys = 0;
  int64_t host_states = 0;
  int64_t bytes = 0;
  std::string kept;  // where the replaced store was moved; empty when there was none
};

// The process holding a lock on the SQLite file at `path` (its pid), 0 when none does or the file
// does not exist. Unavailable when the file cannot be opened to ask.
Result<int64_t> StoreLockHolder(const std::string& path);

// The steps above. Errors: InvalidArgument naming a backup file that is missing or not a regular
// file, or the store's own file; FailedPrecondition for a store in use (naming the process) or a
// backup that fails its checks (naming the check); Unavailable for I/O.
Result<RestoreReport> RestoreSqliteStore(const std::string& backup, const std::string& store_path);

}  // namespace bulkhead
