#include "bulkhead/store/sqlite_db.h"

#include <sqlite3.h>

namespace bulkhead {

void DisableSqliteMemoryStatistics() {
  static const int once = sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
  (void)once;  // SQLITE_MISUSE once SQLite has started: statistics then stay on, which is safe
}

Status SqliteExec(sqlite3* db, const std::string& path, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errmsg(db);
    sqlite3_free(err);
    return Status::Unavailable("sqlite " + path + ": " + msg);
  }
  return Status::Ok();
}

Status SqlitePrepare(sqlite3* db, const char* sql, sqlite3_stmt** stmt) {
  if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, stmt, nullptr) != SQLITE_OK) {
    return Status::Internal("sqlite prepare failed: " + std::string(sqlite3_errmsg(db)));
  }
  return Status::Ok();
}

Status SqliteForEachRow(sqlite3* db, const std::string& path, const char* sql,
                        const std::function<void(sqlite3_stmt*)>& row) {
  sqlite3_stmt* st = nullptr;
  Status s = SqlitePrepare(db, sql, &st);
  if (!s.ok()) return s;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) row(st);
  std::string error = rc == SQLITE_DONE ? std::string() : sqlite3_errmsg(db);
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) {
    return Status::Unavailable("sqlite store " + path + ": reading (" + sql + ") failed: " + error);
  }
  return Status::Ok();
}

Status SqliteStepDone(sqlite3* db, sqlite3_stmt* st, const char* what) {
  int rc = sqlite3_step(st);
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
  if (rc != SQLITE_DONE) {
    return Status::Unavailable(std::string(what) + " failed: " + std::string(sqlite3_errmsg(db)));
  }
  return Status::Ok();
}

std::string_view ColumnView(sqlite3_stmt* st, int col) {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(st, col));
  return text ? std::string_view(text, sqlite3_column_bytes(st, col)) : std::string_view();
}

std::string ColumnText(sqlite3_stmt* st, int col) { return std::string(ColumnView(st, col)); }

}  // namespace bulkhead
