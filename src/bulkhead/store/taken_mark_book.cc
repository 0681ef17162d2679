#include "bulkhead/store/taken_mark_book.h"

#include <charconv>

namespace bulkhead {

Status TakenMarkBook::Load(const std::string& mark, const std::string& value) {
  int64_t until_us = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), until_us);
  if (ec != std::errc() || end != value.data() + value.size()) {
    return Status::InvalidArgument("taken mark " + mark + ": expiry \"" + value +
                                   "\" is not a number");
  }
  Set(mark, until_us);
  return Status::Ok();
}

bool TakenMarkBook::Holds(const std::string& mark, int64_t now_us) const {
  auto it = until_.find(mark);
  return it != until_.end() && it->second > now_us;
}

void TakenMarkBook::Set(const std::string& mark, int64_t until_us) {
  auto [it, inserted] = until_.try_emplace(mark, until_us);
  if (!inserted) {
    by_until_.erase({it->second, mark});
    it->second = until_us;
  }
  by_until_.emplace(until_us, mark);
}

void TakenMarkBook::Put(const std::string& mark, int64_t until_us, std::vector<Change>& out) {
  Set(mark, until_us);
  Change c{Change::Kind::kPutRecord};
  c.name = kTakenSpace;
  c.key = mark;
  c.value = std::to_string(until_us);
  out.push_back(std::move(c));
}

void TakenMarkBook::Drop(const std::string& mark, std::vector<Change>& out) {
  auto it = until_.find(mark);
  if (it == until_.end()) return;
  by_until_.erase({it->second, mark});
  until_.erase(it);
  Change c{Change::Kind::kDeleteRecord};
  c.name = kTakenSpace;
  c.key = mark;
  out.push_back(std::move(c));
}

size_t TakenMarkBook::Expire(int64_t now_us, size_t limit, std::vector<Change>& out) {
  size_t n = 0;
  while (n < limit && !by_until_.empty() && by_until_.begin()->first <= now_us) {
    std::string mark = by_until_.begin()->second;
    Drop(mark, out);
    ++n;
  }
  return n;
}

void TakenMarkBook::Clear() {
  until_.clear();
  by_until_.clear();
}

}  // namespace bulkhead
