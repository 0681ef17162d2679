// Small helpers over an open SQLite connection, shared by the parts of SqliteChangeLog. Each is
// called on the thread that owns `db` (the writer thread, or Load before it starts).
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "bulkhead/util/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace bulkhead {

// Turns off SQLite's allocation statistics for this process: bulkhead reads none of them
// (sqlite3_memory_used, heap limits), and keeping them takes a global mutex and a count on every
// allocation the writer makes. Process-wide and accepted only before SQLite's first use: call it
// before opening a connection; later calls, or a first call after SQLite started, change nothing.
void DisableSqliteMemoryStatistics();

// Runs `sql` (one or more statements). Unavailable "sqlite PATH: error" when it fails; `path`
// names the database in that message.
Status SqliteExec(sqlite3* db, const std::string& path, const char* sql);

// Prepares `sql` as a persistent statement into `*stmt`. Internal when SQLite refuses it.
Status SqlitePrepare(sqlite3* db, const char* sql, sqlite3_stmt** stmt);

// Runs `sql`, calling `row` for each result row; Unavailable names `path`, the statement and
// SQLite's error when preparing or stepping fails.
Status SqliteForEachRow(sqlite3* db, const std::string& path, const char* sql,
                        const std::function<void(sqlite3_stmt*)>& row);

// Steps `st` once, expecting SQLITE_DONE, then resets it and clears its bindings. Unavailable
// "`what` failed: error" otherwise.
Status SqliteStepDone(sqlite3* db, sqlite3_stmt* st, const char* what);

// Column `col` of the current row as a string (empty for NULL).
std::string ColumnText(sqlite3_stmt* st, int col);
// The same without a copy: valid until the statement steps, resets or reads the column as
// another type.
std::string_view ColumnView(sqlite3_stmt* st, int col);

}  // namespace bulkhead
