// JidIndex: the cold queued jobs of MemoryState by jid — a set of QueueSlot pointers, the jid
// compared in the slot itself, so that an entry costs 8 bytes of table (open addressing, linear
// probing, at most 3/4 full: 10.7 to 16 bytes per job) and no copy of the jid. A lookup is exact
// (the jid is compared, never only its hash): PUSH's refusal of a known jid stays exact.
//
// The hash is seeded per process (std::random_device), so that clients cannot choose jids that
// all land on one probe run. Deletion shifts the run back (no tombstones).
//
// The slots must not move while indexed (MemoryState's queues never move a slot: queue_slot.h).
// Thread-compatible.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "bulkhead/store/queue_slot.h"

namespace bulkhead {

class JidIndex {
 public:
  JidIndex();
  size_t size() const { return size_; }
  // The slot of `jid`, or null.
  QueueSlot* Find(std::string_view jid) const;
  // Adds `slot` (its jid must not be in the index).
  void Insert(QueueSlot* slot);
  // Adds `slot` unless its jid is in the index already (then returns false): one probe for both.
  bool InsertNew(QueueSlot* slot);
  // A hint: `jid` is looked up or inserted soon (its home is fetched into the cache meanwhile, so
  // that many inserts in a row overlap their memory latency).
  void Prefetch(std::string_view jid) const { __builtin_prefetch(&table_[Home(jid)]); }
  // Removes `jid`; no-op when absent.
  void Erase(std::string_view jid);
  // Makes room for `n` members in all at once (the load at start knows how many), so that the
  // inserts up to then never rehash.
  void Reserve(size_t n);
  void Clear();

 private:
  size_t Home(std::string_view jid) const;
  size_t Position(std::string_view jid) const;  // its position, or the empty one ending the run
  void Grow();
  void Rehash(size_t capacity);  // a power of two

  std::vector<QueueSlot*> table_;
  size_t size_ = 0;
  size_t mask_ = 0;
  size_t seed_;
};

}  // namespace bulkhead
