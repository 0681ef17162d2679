#include "bulkhead/store/jid_index.h"

#include <functional>
#include <random>

namespace bulkhead {

JidIndex::JidIndex() : table_(16, 0), mask_(15), seed_(std::random_device{}()) {}

size_t JidIndex::Hash(std::string_view jid) const {
  // libstdc++'s murmur hash of the bytes, seeded (std::hash<string_view> takes no seed). The low
  // bits pick the home entry, the top 10 are the tag.
  return std::_Hash_bytes(jid.data(), jid.size(), seed_);
}

size_t JidIndex::Position(std::string_view jid, size_t hash) const {
  const Entry tag = Tag(hash);
  const Entry tag_bits = tagged_ ? kTagMask : 0;
  size_t i = hash & mask_;
  for (Entry e = table_[i]; e != 0; e = table_[i]) {
    if ((e & tag_bits) == tag && SlotOf(e)->jid.view() == jid) break;
    i = (i + 1) & mask_;
  }
  return i;
}

size_t JidIndex::HomeAt(size_t i) const {
  Entry e = table_[i];
  if (tagged_) {
    size_t distance = (e & kDistanceMask) >> kAddressBits;
    if (distance < kFar) return (i - distance) & mask_;
  }
  return Hash(SlotOf(e)->jid.view()) & mask_;
}

void JidIndex::Place(QueueSlot* slot, size_t hash) {
  const size_t home = hash & mask_;
  size_t i = home;
  while (table_[i] != 0) i = (i + 1) & mask_;
  table_[i] = EntryOf(slot, hash, (i - home) & mask_);
}

QueueSlot* JidIndex::Find(std::string_view jid) const {
  Entry e = table_[Position(jid, Hash(jid))];
  return e == 0 ? nullptr : SlotOf(e);
}

void JidIndex::Insert(QueueSlot* slot) {
  CheckAddress(slot);
  if ((size_ + 1) * 4 > table_.size() * 3) Grow();
  Place(slot, Hash(slot->jid.view()));
  ++size_;
}

bool JidIndex::InsertNew(QueueSlot* slot) {
  CheckAddress(slot);
  if ((size_ + 1) * 4 > table_.size() * 3) Grow();
  size_t hash = Hash(slot->jid.view());
  size_t i = Position(slot->jid.view(), hash);
  if (table_[i] != 0) return false;
  table_[i] = EntryOf(slot, hash, (i - (hash & mask_)) & mask_);
  ++size_;
  return true;
}

void JidIndex::Erase(std::string_view jid) {
  size_t i = Position(jid, Hash(jid));
  if (table_[i] == 0) return;
  table_[i] = 0;
  --size_;
  // Backward shift: move every later member of the run whose home is not in (i, j] into the hole.
  for (size_t j = (i + 1) & mask_; table_[j] != 0; j = (j + 1) & mask_) {
    size_t home = HomeAt(j);
    bool stays = (i <= j) ? (i < home && home <= j) : (i < home || home <= j);
    if (stays) continue;
    table_[i] = WithDistance(table_[j], (i - home) & mask_);
    table_[j] = 0;
    i = j;
  }
}

void JidIndex::Clear() {
  std::vector<Entry>(16, 0).swap(table_);
  mask_ = 15;
  size_ = 0;
}

void JidIndex::Reserve(size_t n) {
  size_t capacity = table_.size();
  while (n * 4 > capacity * 3) capacity *= 2;
  if (capacity != table_.size()) Rehash(capacity);
}

void JidIndex::DropHashBits() {
  if (!tagged_) return;
  for (Entry& e : table_) e &= kAddressMask;  // the distances go too: each jid is read
  tagged_ = false;
}

void JidIndex::Grow() { Rehash(table_.size() * 2); }

void JidIndex::Rehash(size_t capacity) {
  std::vector<Entry> old(capacity, 0);
  old.swap(table_);
  mask_ = table_.size() - 1;
  // The members are distinct: each goes to the first empty entry of its run, no jid compared.
  for (Entry e : old) {
    if (e != 0) Place(SlotOf(e), Hash(SlotOf(e)->jid.view()));
  }
}

}  // namespace bulkhead
