// JidIndex: the cold queued jobs of MemoryState by jid — a set of QueueSlot pointers, the jid
// compared in the slot itself, so that an entry costs 8 bytes of table (open addressing, linear
// probing, at most 3/4 full: 10.7 to 16 bytes per job) and no copy of the jid. A lookup is exact
// (the jid is compared, never only its hash): PUSH's refusal of a known jid stays exact.
//
// Each entry keeps 16 bits of its jid's hash in the pointer's top bits, which user-space pointers
// leave zero on x86-64 and AArch64 (48-bit addresses): a probe passes an entry whose bits differ
// without reading its slot, so that a PUSH of a new jid (a probe to the end of a run) reads no
// slot in 65,535 cases of 65,536 where it read one per entry of the run, each a cache miss at
// millions of jobs. Should a slot ever lie above 2^48, the index drops the hash bits and compares
// every entry's jid (still exact).
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
  void Prefetch(std::string_view jid) const { __builtin_prefetch(&table_[Hash(jid) & mask_]); }
  // Removes `jid`; no-op when absent.
  void Erase(std::string_view jid);
  // Makes room for `n` members in all at once (the load at start knows how many), so that the
  // inserts up to then never rehash.
  void Reserve(size_t n);
  void Clear();
  // Drops the hash bits from every entry and compares each entry's jid from then on: what the
  // index does when a slot lies above 2^48. Public for tests (no such address occurs on x86-64).
  void DropHashBits();

 private:
  // An entry: the slot's address, with the jid's hash bits above kAddressBits when tagged_.
  using Entry = uintptr_t;
  static constexpr int kAddressBits = 48;
  static constexpr Entry kAddressMask = (Entry{1} << kAddressBits) - 1;

  size_t Hash(std::string_view jid) const;
  Entry Tag(size_t hash) const { return tagged_ ? hash & ~kAddressMask : 0; }
  QueueSlot* SlotOf(Entry e) const {
    return reinterpret_cast<QueueSlot*>(tagged_ ? e & kAddressMask : e);
  }
  Entry EntryOf(QueueSlot* slot, size_t hash) const {
    return reinterpret_cast<Entry>(slot) | Tag(hash);
  }
  // The position of `jid`, or of the empty entry ending its run.
  size_t Position(std::string_view jid, size_t hash) const;
  // Adds `slot` at the first empty entry of its run (its jid must not be in the index).
  void Place(QueueSlot* slot, size_t hash);
  // Keeps the hash bits while every slot's address fits below them; else drops them for good.
  void CheckAddress(const QueueSlot* slot) {
    if (tagged_ && (reinterpret_cast<Entry>(slot) & ~kAddressMask) != 0) DropHashBits();
  }
  void Grow();
  void Rehash(size_t capacity);  // a power of two

  std::vector<Entry> table_;
  size_t size_ = 0;
  size_t mask_ = 0;
  size_t seed_;
  bool tagged_ = true;
};

}  // namespace bulkhead
