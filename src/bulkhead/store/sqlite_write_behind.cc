#include "bulkhead/store/sqlite_write_behind.h"

namespace bulkhead {

bool SqliteWriteBehind::Take(Change& c) {
  switch (c.kind) {
    case Change::Kind::kUpdateState:
      states_.insert_or_assign(c.id, std::move(c));
      return true;
    case Change::Kind::kPutRecord:
    case Change::Kind::kDeleteRecord:
      TakeRecord(c);
      return true;
    case Change::Kind::kAddCounter:
      counters_[c.name] += c.delta;
      return true;
    case Change::Kind::kUpdateJob:
    case Change::Kind::kDeleteJob:
      states_.erase(c.id);
      return false;
    case Change::Kind::kDeleteAll:
      Clear();
      return false;
    default:
      return false;
  }
}

void SqliteWriteBehind::TakeRecord(Change& c) {
  auto it = records_.find(RecordKeyView(c.name, c.key));
  if (it == records_.end()) {
    RecordKey key(c.name, c.key);
    records_.emplace(std::move(key), std::move(c));
    return;
  }
  // A kept put of a record stored nowhere (Change::flag) leaves it stored nowhere until written.
  bool unstored = it->second.kind == Change::Kind::kPutRecord && it->second.flag;
  if (unstored && c.kind == Change::Kind::kDeleteRecord) {
    records_.erase(it);  // put and deleted within the transaction: nothing to write
    return;
  }
  it->second = std::move(c);
  if (it->second.kind == Change::Kind::kPutRecord) it->second.flag = unstored;
}

bool SqliteWriteBehind::Overlay(int64_t id, JobRecord& row) const {
  auto it = states_.find(id);
  if (it == states_.end()) return false;
  row.state = it->second.job.state;
  row.score = it->second.job.score;
  return true;
}

Status SqliteWriteBehind::Write(SqliteChangeWriter& writer) {
  Status s;
  for (const auto& [id, c] : states_) {
    s = writer.Write(c);
    if (!s.ok()) break;
  }
  for (auto it = records_.begin(); s.ok() && it != records_.end(); ++it)
    s = writer.Write(it->second);
  for (auto it = counters_.begin(); s.ok() && it != counters_.end(); ++it)
    s = writer.AddCounter(it->first, it->second);
  Clear();
  return s;
}

void SqliteWriteBehind::Clear() {
  states_.clear();
  records_.clear();
  counters_.clear();
}

}  // namespace bulkhead
