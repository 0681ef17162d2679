// The HTTP API of online backups (`bulkhead backup`, store/store_backup.h):
//
//   POST /api/backup   body {"path": "/absolute/path/of/the/copy.db"}
//            202 the backup started, body: the backup JSON (below)
//            400 {"error"} naming what is wrong with the path (relative, no such directory, a
//                directory, the store's own file, an existing file that is not an SQLite
//                database, not writable) or the body
//            409 {"error"} a backup is already running
//            501 {"error"} the store has no file to back up: memory: (nothing survives a
//                restart) or Redis (back it up with Redis's own BGSAVE or AOF)
//   GET  /api/backup   200 the backup JSON of the running or last backup
//
// Backup JSON: {"state": "none" | "running" | "done" | "failed", "path", "pages_done",
// "pages_total", "bytes" (when done), "seconds" (since it started, or its duration), "error"
// (when failed)}. The path is the server's: a relative one is refused (the client resolves it).
// With a password configured both routes need `Authorization: Bearer <password>`.
#pragma once

#include <string>

#include "bulkhead/http/http_server.h"
#include "bulkhead/store/store.h"
#include "bulkhead/util/clock.h"

namespace bulkhead {

inline constexpr char kBackupApiPath[] = "/api/backup";

// Registers the routes above on `http`. `store` and `clock` must outlive `http`'s handlers.
void RegisterBackupApi(HttpServer& http, Store& store, const Clock& clock,
                       const std::string& password);

}  // namespace bulkhead
