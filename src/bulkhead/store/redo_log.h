// RedoLog: the `sqlite:` store's own append-only log of changes, the file `path`-redo beside the
// database (mode 0600). Under durability "process" the event loop appends a turn's changes here
// and answers them at once; the writer thread commits them to SQLite afterwards, recording the
// record's number in meta.redo_seq in the same transaction (SqliteChangeLog).
//
// The file has a fixed size (its blocks allocated at open, posix_fallocate) and is mapped shared
// (mmap MAP_SHARED): an append is a copy into the kernel's page cache, with no system call. What
// is copied there survives a kill -9 of the server (the page cache is the file's, not the
// process's); a power loss can lose it, as it can lose SQLite's unsynced WAL under "process"
// (sqlite_change_log.h). The blocks are allocated before any copy, so a full disk refuses the
// open instead of raising SIGBUS at an append.
//
// Layout: a 16-byte header, the magic "BHRL", the format version (u32, 1) and the epoch (u64),
// then records back to back. Record: the magic "BHR1", the body's length (u32), its CRC-32
// (zlib's crc32, u32), then the body: the epoch (u64), the record's number (i64) and the changes
// (change_codec.h, several encodings back to back). Integers little-endian. Reset (all records
// committed) bumps the header's epoch, one aligned 8-byte store, and appends start over at the
// first record: what the earlier epoch left further on is no longer part of the log.
//
// Reading (Read): the log is the records of the header's epoch from the first one on, and ends at
// the first place that holds no such record (zeros, an earlier epoch's remains, a record cut
// short by a kill during its copy: never answered). It is damage (InvalidArgument naming the
// offset) when a record of the epoch with a later number lies beyond that end (a record in the
// middle went bad), when a record's body passes its CRC and does not decode, or when the header
// is not a redo log's.
//
// Thread-safety: none; SqliteChangeLog calls it under its mutex.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bulkhead/store/change.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

class RedoLog {
 public:
  // Opens `path` (created with mode 0600 when missing), sized to hold `capacity` bytes of
  // records, and resets it (a new epoch: whatever it held is gone, so read it first).
  // Unavailable when it cannot be created, allocated or mapped.
  static Result<std::unique_ptr<RedoLog>> Open(const std::string& path, uint64_t capacity);
  ~RedoLog();
  RedoLog(const RedoLog&) = delete;
  RedoLog& operator=(const RedoLog&) = delete;

  // Appends record `seq` holding the changes of each of `parts`, in order. ResourceExhausted
  // (nothing written) when it does not fit in what is left of the capacity.
  Status Append(int64_t seq, const std::vector<const std::vector<Change>*>& parts);
  // Forgets every record (all of them are in the database): a new epoch.
  void Reset();
  // Bytes of records appended since the last reset.
  uint64_t bytes() const { return end_ - kHeaderBytes; }

  struct Record {
    int64_t seq = 0;
    std::vector<Change> changes;
  };
  struct Contents {
    std::vector<Record> records;
  };
  // Reads the records of the file at `path` (a missing or empty file has none).
  static Result<Contents> Read(const std::string& path);

  static constexpr uint64_t kHeaderBytes = 16;

 private:
  RedoLog(std::string path, int fd, char* map, uint64_t size)
      : path_(std::move(path)), fd_(fd), map_(map), size_(size) {}

  const std::string path_;
  const int fd_;
  char* const map_;
  const uint64_t size_;          // of the file and the mapping
  uint64_t end_ = kHeaderBytes;  // where the next record goes
  uint64_t epoch_ = 0;
  std::string buf_;  // the record being built, reused
};

}  // namespace bulkhead
