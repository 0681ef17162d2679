// SqliteWriteBehind: the writes of the writer's open transaction that can wait for its COMMIT.
// The writer keeps a transaction open for several batches (sqlite_change_log.h, "Who commits"),
// so a job is often reserved and acknowledged in the same transaction: its reservation (a state
// update) and its holder's record (put at FETCH, deleted at ACK) need not be written at all.
// Kept until the commit, the last change per row or key only:
// - kUpdateState, by job row id (dropped by a later kUpdateJob or kDeleteJob of that row, which
//   are written at once and set the state themselves);
// - kPutRecord and kDeleteRecord, by (space, key): the last one is written (a delete is written
//   even after a put of the same key: the key may be in the file from an earlier transaction),
//   except that a delete after a put of a record stored nowhere before (Change::flag: a worker's
//   hold, put at FETCH and deleted at ACK) drops both;
// - kAddCounter, summed by counter name.
// kDeleteAll (FLUSH), written at once, drops everything kept before it. Every other change is
// written at once, in order (inserts first of all: reads in the open transaction need them).
//
// Reads in the open transaction see what is kept through Overlay (only the job rows are read in
// it; records and counters are read at open and by backups, which run between transactions).
//
// Not thread-safe: the writer thread's own, like its connection.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "bulkhead/store/change.h"
#include "bulkhead/store/sqlite_change_writer.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

class SqliteWriteBehind {
 public:
  // Keeps `c` (moved from) when its kind can wait and returns true; otherwise forgets what `c`,
  // to be written now by the caller, makes moot, and returns false.
  bool Take(Change& c);
  // A job row read in the open transaction: its state and score as the kept update sets them.
  // True when an update of row `id` is kept.
  bool Overlay(int64_t id, JobRecord& row) const;
  // Writes everything kept through `writer` (just before COMMIT) and forgets it, also on failure
  // (the transaction is rolled back then).
  Status Write(SqliteChangeWriter& writer);
  // Forgets everything kept (a rolled-back transaction).
  void Clear();
  size_t size() const { return states_.size() + records_.size() + counters_.size(); }

 private:
  void TakeRecord(Change& c);

  // A record's (space, key), hashed and compared as views, so that finding a kept record copies
  // neither string (only a new one's key is copied). Unordered: the writes of distinct keys
  // commute, and a tree of string pairs cost two string comparisons a level.
  using RecordKey = std::pair<std::string, std::string>;
  using RecordKeyView = std::pair<std::string_view, std::string_view>;
  struct RecordKeyHash {
    using is_transparent = void;
    size_t operator()(const RecordKeyView& k) const {
      size_t h = std::hash<std::string_view>()(k.first);
      return h ^
             (std::hash<std::string_view>()(k.second) + 0x9e3779b97f4a7c15 + (h << 6) + (h >> 2));
    }
    size_t operator()(const RecordKey& k) const {
      return (*this)(RecordKeyView(k.first, k.second));
    }
  };
  struct RecordKeyEqual {
    using is_transparent = void;
    bool operator()(const RecordKeyView& a, const RecordKeyView& b) const { return a == b; }
  };

  std::unordered_map<int64_t, Change> states_;
  std::unordered_map<RecordKey, Change, RecordKeyHash, RecordKeyEqual> records_;
  std::map<std::string, int64_t> counters_;
};

}  // namespace bulkhead
