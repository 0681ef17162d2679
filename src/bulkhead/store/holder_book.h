// HolderBook: which worker (HELLO wid) holds each reservation a worker's FETCH made, for the
// dashboard's Busy page. Kept by MemoryState beside the working set and persisted, by the sqlite:
// log, as records of kHolderSpace (key jid, value wid); an older build ignores that space.
//
// Invariant (MemoryState keeps it): a jid has an entry only while it is reserved; MemoryState
// drops the entry whenever the job leaves the working set.
//
// Thread-compatible, as MemoryState.
#pragma once

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "bulkhead/store/change.h"

namespace bulkhead {

inline constexpr char kHolderSpace[] = "holder";  // jid -> wid

class HolderBook {
 public:
  void Load(const std::string& jid, std::string wid) { wid_of_[jid] = std::move(wid); }
  // Records (or replaces) the holder of `jid`; an empty wid drops it. The put of a record stored
  // nowhere yet (no holder of `jid` loaded, kept or put since) has Change::flag set: a delete of
  // it in the same transaction makes both moot (sqlite_write_behind.h).
  void Set(const std::string& jid, const std::string& wid, std::vector<Change>& out);
  // Drops the holder of `jid`, if any (a change only when there was one).
  void Drop(const std::string& jid, std::vector<Change>& out);
  // FLUSH (kDeleteAll deletes the records): memory only.
  void Clear() {
    wid_of_.clear();
    ignored_rows_.clear();
  }
  // Drops the entries `keep` refuses, in memory only. At load, defensively: every drop is in the
  // same change batch as the end of its reservation, so a stored record names a reserved job; one
  // that does not is ignored (its row stays until a later SetHolder of that jid replaces it, and
  // that put is not marked as creating the record).
  template <typename Keep>
  void Retain(Keep keep) {
    std::erase_if(wid_of_, [&](const auto& kv) {
      if (keep(kv.first)) return false;
      ignored_rows_.insert(kv.first);
      return true;
    });
  }
  const std::unordered_map<std::string, std::string>& entries() const { return wid_of_; }

 private:
  std::unordered_map<std::string, std::string> wid_of_;
  // Jids whose stored record Retain ignored: stored, though not in wid_of_ (almost always empty).
  std::unordered_set<std::string> ignored_rows_;
};

}  // namespace bulkhead
