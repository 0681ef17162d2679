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
// Two regions, so that the log never has to be emptied to go on: records are appended to one
// region; once it holds `switch_bytes` (or has no room left) and every record of the other one is
// in the database (Committed), the other one is reset and appends go on there. The writer thread
// commits behind the loop continuously, so a log that had to be empty to be reset would only be
// reset once full, stopping the loop's logging each time (what a single region did under sustained
// load). The log is full (ResourceExhausted) only when the region appended to has no room and the
// other still holds a record not committed: the writer is a whole region behind.
//
// Layout (version 2): a 24-byte header, the magic "BHRL", the format version (u32, 2) and each
// region's epoch (u64, u64), then region 0 and region 1, of equal size. Records lie back to back
// from each region's start. Record: the magic "BHR1", the body's length (u32), its CRC-32 (zlib's
// crc32, u32), then the body: the epoch (u64), the record's number (i64) and the changes
// (change_codec.h, several encodings back to back). Integers little-endian. A reset gives its
// region a new epoch, larger than any the file used before (one aligned 8-byte store in the
// header), and appends start over at the region's start: what an earlier epoch left further on is
// no longer part of the log. Version 1 (a 16-byte header with one epoch and one region: the
// file an earlier release leaves) is still read.
//
// Reading (Read): each region's records are those of its epoch from its start on, ending at the
// first place that holds no such record (zeros, an earlier epoch's remains, a record cut short by
// a kill during its copy: never answered); the log is both regions' records in number order. It
// is damage (InvalidArgument naming the offset) when a record of the region's epoch with a later
// number lies beyond that end (a record in the middle went bad), when a record's body passes its
// CRC and does not decode, when both regions hold the same number, or when the header is not a
// redo log's.
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
  // Opens `path` (created with mode 0600 when missing), sized to hold two regions of
  // `region_bytes` bytes of records, and resets it (new epochs: whatever it held is gone, so read
  // it first). Appends move to the other region once one holds `switch_bytes` (see above).
  // Unavailable when it cannot be created, allocated or mapped.
  static Result<std::unique_ptr<RedoLog>> Open(const std::string& path, uint64_t region_bytes,
                                               uint64_t switch_bytes);
  ~RedoLog();
  RedoLog(const RedoLog&) = delete;
  RedoLog& operator=(const RedoLog&) = delete;

  // Appends record `seq` (numbers increase by one) holding the changes of each of `parts`, in
  // order. ResourceExhausted (nothing written) when it fits neither in what is left of the region
  // appended to nor in the other region (which still holds a record not committed, or is too
  // small for it).
  Status Append(int64_t seq, const std::vector<const std::vector<Change>*>& parts);
  // Every record numbered up to `seq` is in the database. Returns whether the other region is
  // free now (its records all committed): an Append that found no room finds it again.
  bool Committed(int64_t seq);
  // Forgets every record (all of them are in the database): new epochs for both regions.
  void Reset();
  // Bytes of records in the region appended to, since its last reset.
  uint64_t bytes() const { return regions_[active_].end - regions_[active_].begin; }
  // Which region is appended to (0 or 1), and where it starts in the file.
  int active_region() const { return active_; }
  uint64_t region_start(int region) const { return regions_[region].begin; }

  struct Record {
    int64_t seq = 0;
    std::vector<Change> changes;
  };
  struct Contents {
    std::vector<Record> records;
  };
  // Reads the records of the file at `path` (a missing or empty file has none).
  static Result<Contents> Read(const std::string& path);

  static constexpr uint64_t kHeaderBytes = 24;

 private:
  struct Region {
    uint64_t begin = 0, limit = 0;  // its bytes in the file: [begin, limit)
    uint64_t end = 0;               // where its next record goes
    uint64_t epoch = 0;
    int64_t last_seq = 0;  // the number of its last record; 0 when it holds none
  };
  RedoLog(std::string path, int fd, char* map, uint64_t size, uint64_t switch_bytes)
      : path_(std::move(path)), fd_(fd), map_(map), size_(size), switch_bytes_(switch_bytes) {}
  // Gives region `r` a new epoch and no records.
  void ResetRegion(int r);
  // The other region holds no record that is not committed.
  bool OtherFree() const { return regions_[1 - active_].last_seq <= committed_; }

  const std::string path_;
  const int fd_;
  char* const map_;
  const uint64_t size_;  // of the file and the mapping
  const uint64_t switch_bytes_;
  Region regions_[2];
  int active_ = 0;           // the region appended to
  uint64_t last_epoch_ = 0;  // the largest epoch the file has used
  int64_t committed_ = 0;    // every record up to this number is in the database
  std::string buf_;          // the record being built, reused
};

}  // namespace bulkhead
