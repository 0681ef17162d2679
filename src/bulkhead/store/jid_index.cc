#include "bulkhead/store/jid_index.h"

#include <functional>
#include <random>

namespace bulkhead {

JidIndex::JidIndex() : table_(16, nullptr), mask_(15), seed_(std::random_device{}()) {}

size_t JidIndex::Home(std::string_view jid) const {
  // libstdc++'s murmur hash of the bytes, seeded (std::hash<string_view> takes no seed).
  return std::_Hash_bytes(jid.data(), jid.size(), seed_) & mask_;
}

size_t JidIndex::Position(std::string_view jid) const {
  size_t i = Home(jid);
  while (table_[i] != nullptr && table_[i]->jid.view() != jid) i = (i + 1) & mask_;
  return i;
}

QueueSlot* JidIndex::Find(std::string_view jid) const { return table_[Position(jid)]; }

void JidIndex::Insert(QueueSlot* slot) {
  if ((size_ + 1) * 4 > table_.size() * 3) Grow();
  table_[Position(slot->jid.view())] = slot;
  ++size_;
}

bool JidIndex::InsertNew(QueueSlot* slot) {
  if ((size_ + 1) * 4 > table_.size() * 3) Grow();
  size_t i = Position(slot->jid.view());
  if (table_[i] != nullptr) return false;
  table_[i] = slot;
  ++size_;
  return true;
}

void JidIndex::Erase(std::string_view jid) {
  size_t i = Position(jid);
  if (table_[i] == nullptr) return;
  table_[i] = nullptr;
  --size_;
  // Backward shift: move every later member of the run whose home is not in (i, j] into the hole.
  for (size_t j = (i + 1) & mask_; table_[j] != nullptr; j = (j + 1) & mask_) {
    size_t home = Home(table_[j]->jid.view());
    bool stays = (i <= j) ? (i < home && home <= j) : (i < home || home <= j);
    if (stays) continue;
    table_[i] = table_[j];
    table_[j] = nullptr;
    i = j;
  }
}

void JidIndex::Clear() {
  std::vector<QueueSlot*>(16, nullptr).swap(table_);
  mask_ = 15;
  size_ = 0;
}

void JidIndex::Reserve(size_t n) {
  size_t capacity = table_.size();
  while (n * 4 > capacity * 3) capacity *= 2;
  if (capacity != table_.size()) Rehash(capacity);
}

void JidIndex::Grow() { Rehash(table_.size() * 2); }

void JidIndex::Rehash(size_t capacity) {
  std::vector<QueueSlot*> old(capacity, nullptr);
  old.swap(table_);
  mask_ = table_.size() - 1;
  for (QueueSlot* s : old) {
    if (s != nullptr) table_[Position(s->jid.view())] = s;
  }
}

}  // namespace bulkhead
