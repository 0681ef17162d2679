// QueueSlot: one place in a queue of MemoryState, holding either a whole job (hot: its Entry, with
// the payload in memory) or only what FETCH, the jid lookup and the queue statistics need of it
// (cold: the payload lives in the log, read back on the log's thread when the job is fetched or
// looked at). The sqlite: store turns a queued job cold once the commit that wrote it is durable,
// so that a backlog costs memory per job independent of the job's size.
//
// Cold layout (64 bytes per queued job with a jid of up to 31 bytes, Sidekiq's and Mastodon's are
// 24): the row id, enqueued_at, reserve_for, the queue's number and the jid inline (a longer jid is
// kept on the heap). What is not here (jobtype, payload, the FIFO sequence) is read from the row.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

namespace bulkhead {

// A jid in 32 bytes: inline up to 31 bytes, else on the heap.
class CompactJid {
 public:
  CompactJid() { buf_[kTag] = 0; }
  explicit CompactJid(std::string_view jid) { Assign(jid); }
  CompactJid(const CompactJid& o) { Assign(o.view()); }
  CompactJid& operator=(const CompactJid& o) {
    if (this != &o) {
      Release();
      Assign(o.view());
    }
    return *this;
  }
  CompactJid(CompactJid&& o) noexcept {
    std::memcpy(buf_, o.buf_, sizeof buf_);
    o.buf_[kTag] = 0;
  }
  CompactJid& operator=(CompactJid&& o) noexcept {
    if (this != &o) {
      Release();
      std::memcpy(buf_, o.buf_, sizeof buf_);
      o.buf_[kTag] = 0;
    }
    return *this;
  }
  ~CompactJid() { Release(); }

  std::string_view view() const {
    if (static_cast<uint8_t>(buf_[kTag]) != kHeap) return {buf_, static_cast<uint8_t>(buf_[kTag])};
    Heap h;
    std::memcpy(&h, buf_, sizeof h);
    return {h.data, h.size};
  }

 private:
  static constexpr size_t kTag = 31;
  static constexpr uint8_t kHeap = 0xff;
  struct Heap {
    char* data;
    size_t size;
  };
  void Assign(std::string_view jid) {
    if (jid.size() < kTag) {
      std::memcpy(buf_, jid.data(), jid.size());
      buf_[kTag] = static_cast<char>(jid.size());
      return;
    }
    Heap h{new char[jid.size()], jid.size()};
    std::memcpy(h.data, jid.data(), jid.size());
    std::memcpy(buf_, &h, sizeof h);
    buf_[kTag] = static_cast<char>(kHeap);
  }
  void Release() {
    if (static_cast<uint8_t>(buf_[kTag]) != kHeap) return;
    Heap h;
    std::memcpy(&h, buf_, sizeof h);
    delete[] h.data;
    buf_[kTag] = 0;
  }
  char buf_[32];
};

struct HotJob;  // a job MemoryState holds whole (memory_state.h)

struct QueueSlot {
  // The hot job, or null when the slot is cold.
  HotJob* hot = nullptr;
  // Cold only: the job's row id in the log, its enqueued_at (µs), its reserve_for (s) and the
  // number of its queue (MemoryState numbers the queues it knows).
  int64_t id = 0;
  int64_t enqueued_us = 0;
  int32_t reserve_for_s = 0;
  uint32_t queue_no : 31 = 0;
  // Its row is being read ahead of FETCH (MemoryState::ColdFetch): not asked for again.
  uint32_t requested : 1 = 0;
  CompactJid jid;
};
static_assert(sizeof(QueueSlot) == 64);

}  // namespace bulkhead
