#include "bulkhead/store/holder_book.h"

namespace bulkhead {

void HolderBook::Set(const std::string& jid, const std::string& wid, std::vector<Change>& out) {
  if (wid.empty()) return Drop(jid, out);
  wid_of_[jid] = wid;
  Change c{Change::Kind::kPutRecord};
  c.name = kHolderSpace;
  c.key = jid;
  c.value = wid;
  out.push_back(std::move(c));
}

void HolderBook::Drop(const std::string& jid, std::vector<Change>& out) {
  if (wid_of_.erase(jid) == 0) return;
  Change c{Change::Kind::kDeleteRecord};
  c.name = kHolderSpace;
  c.key = jid;
  out.push_back(std::move(c));
}

}  // namespace bulkhead
