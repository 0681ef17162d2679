// JidIndex: the cold queued jobs of MemoryState by jid — a set of QueueSlot pointers, the jid
// compared in the slot itself, so that an entry costs 8 bytes of table (open addressing, linear
// probing, at most 3/4 full: 10.7 to 16 bytes per job) and no copy of the jid. A lookup is exact
// (the jid is compared, never only its hash): PUSH's refusal of a known jid stays exact.
//
// Each entry keeps, in the pointer's top 16 bits (user-space pointers leave them zero on x86-64
// and AArch64: 48-bit addresses), 10 bits of its jid's hash and its distance from its home entry
// (6 bits; 63 stands for "that far or farther"). A probe passes an entry whose hash bits differ
// without reading its slot (each read a cache miss at millions of jobs), so that a PUSH of a new
// jid, a probe to the end of a run, reads a slot for 1 entry of 1,024 it passes. An erase shifts
// the rest of its run back knowing each entry's home from its distance, without reading a slot
// (reading each one's jid to hash it cost 3.6 slot reads an erase at a steady 300,000 jobs).
// Should a slot ever lie above 2^48, the index drops the bits and compares every entry's jid
// (still exact).
//
// The hash is seeded per process (std::random_device), so that clients cannot choose jids that
// all land on one probe run. Deletion shifts the run back (no tombstones).
//
// The slots must not move while indexed (MemoryState's queues never move a slot: queue_slot.h).
// Thread-compatible.
#pragma once

#include <algorithm>
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
  // For tests: the entry where a probe for `jid` starts, and the table's size.
  size_t HomeOf(std::string_view jid) const { return Hash(jid) & mask_; }
  size_t capacity() const { return table_.size(); }

 private:
  // An entry: the slot's address in the low kAddressBits; when tagged_, the entry's distance
  // from its home above them (kFar: that far or farther) and the jid's hash bits on top.
  using Entry = uintptr_t;
  static constexpr int kAddressBits = 48;
  static constexpr int kDistanceBits = 6;
  static constexpr size_t kFar = (size_t{1} << kDistanceBits) - 1;
  static constexpr Entry kAddressMask = (Entry{1} << kAddressBits) - 1;
  static constexpr Entry kDistanceMask = Entry{kFar} << kAddressBits;
  static constexpr Entry kTagMask = ~(kAddressMask | kDistanceMask);

  size_t Hash(std::string_view jid) const;
  Entry Tag(size_t hash) const { return tagged_ ? hash & kTagMask : 0; }
  QueueSlot* SlotOf(Entry e) const {
    return reinterpret_cast<QueueSlot*>(tagged_ ? e & kAddressMask : e);
  }
  // The entry of `slot` (hash: its jid's) at `distance` entries past its home.
  Entry EntryOf(QueueSlot* slot, size_t hash, size_t distance) const {
    return WithDistance(reinterpret_cast<Entry>(slot) | Tag(hash), distance);
  }
  Entry WithDistance(Entry e, size_t distance) const {
    if (!tagged_) return e;
    return (e & ~kDistanceMask) | (Entry{std::min(distance, kFar)} << kAddressBits);
  }
  // The home of the entry at position `i`: from its distance, else from its jid.
  size_t HomeAt(size_t i) const;
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
