// SqliteChangeWriter: writes the Changes of one transaction through SqliteChangeLog's prepared
// statements, one statement per change (a counter change adds its delta: SqliteWriteBehind sums
// them per transaction first). The caller opens and ends the transaction, on the thread that owns
// the connection.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bulkhead/store/change.h"
#include "bulkhead/store/sqlite_statements.h"
#include "bulkhead/util/status.h"

struct sqlite3;

namespace bulkhead {

class SqliteChangeWriter {
 public:
  // `path` names the database in errors. `db` and `statements` must outlive the writer.
  SqliteChangeWriter(sqlite3* db, const std::string& path, const SqliteStatements& statements)
      : db_(db), path_(path), stmts_(statements) {}

  // Writes `c`. Unavailable when SQLite refuses the write.
  Status Write(const Change& c);
  // Deletes the job rows `ids` (what Write does with their kDeleteJob changes), sorted first, and
  // each run of consecutive ids by one statement: a batch of ACKs of a queue's jobs deletes runs of
  // rows, and one statement per row costs about twice as much. Clears `ids`.
  Status DeleteJobs(std::vector<int64_t>& ids);
  // Adds `delta` to the counter `name` (what Write does with a kAddCounter change).
  Status AddCounter(const std::string& name, int64_t delta);
  // Records `seq` as meta.commit_seq.
  Status WriteCommitSeq(int64_t seq);
  // Records `seq` as meta.redo_seq: the last redo record the transaction holds (redo_log.h).
  Status WriteRedoSeq(int64_t seq);

 private:
  sqlite3* const db_;
  const std::string& path_;
  const SqliteStatements& stmts_;
};

}  // namespace bulkhead
