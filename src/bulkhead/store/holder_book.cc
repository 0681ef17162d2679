#include "bulkhead/store/holder_book.h"

namespace bulkhead {

void HolderBook::Set(const std::string& jid, const std::string& wid, std::vector<Change>& out) {
  if (wid.empty()) return Drop(jid, out);
  bool created = wid_of_.insert_or_assign(jid, wid).second;
  if (!ignored_rows_.empty() && ignored_rows_.erase(jid) > 0) created = false;  // replaced now
  Change& c = out.emplace_back(Change::Kind::kPutRecord);  // in place: a Change is large
  c.name = kHolderSpace;
  c.key = jid;
  c.value = wid;
  c.flag = created;
}

void HolderBook::Drop(const std::string& jid, std::vector<Change>& out) {
  if (wid_of_.erase(jid) == 0) return;
  Change& c = out.emplace_back(Change::Kind::kDeleteRecord);
  c.name = kHolderSpace;
  c.key = jid;
}

}  // namespace bulkhead
