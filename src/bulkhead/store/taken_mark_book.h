// TakenMarkBook: the embedded stores' taken marks (taken_marks.h): mark -> until, in memory, with
// an index by expiry. MemoryState keeps it beside the jobs; the sqlite: log persists each mark as a
// record of kTakenSpace (key: the mark, value: until in µs since the epoch, decimal). FLUSH clears
// it with the other records.
//
// Thread-compatible, as MemoryState.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "bulkhead/store/change.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

inline constexpr char kTakenSpace[] = "taken";  // mark -> until (µs)

class TakenMarkBook {
 public:
  // Loading: one record. InvalidArgument when the value is not a decimal number.
  Status Load(const std::string& mark, const std::string& value);
  // True when `mark` is held with an expiry after now_us.
  bool Holds(const std::string& mark, int64_t now_us) const;
  // Records (or replaces) `mark` until until_us.
  void Put(const std::string& mark, int64_t until_us, std::vector<Change>& out);
  // Deletes `mark`, if held (a change only then).
  void Drop(const std::string& mark, std::vector<Change>& out);
  // Deletes up to `limit` marks whose expiry is at or before now_us. Returns how many.
  size_t Expire(int64_t now_us, size_t limit, std::vector<Change>& out);
  // FLUSH (kDeleteAll deletes the records): memory only.
  void Clear();
  size_t size() const { return until_.size(); }

 private:
  void Set(const std::string& mark, int64_t until_us);
  std::unordered_map<std::string, int64_t> until_;
  std::set<std::pair<int64_t, std::string>> by_until_;
};

}  // namespace bulkhead
