#include "bulkhead/store/change_codec.h"

#include <cstring>
#include <type_traits>

namespace bulkhead {
namespace {

constexpr uint8_t kLastKind = static_cast<uint8_t>(Change::Kind::kDeleteRecord);
constexpr uint8_t kLastJobState = static_cast<uint8_t>(JobState::kWorking);

// Counts the bytes Writer writes for the same calls: EncodeChanges sizes its output once.
class Sizer {
 public:
  template <typename T>
  void Int(T) {
    static_assert(std::is_integral_v<T>);
    bytes_ += sizeof(T);
  }
  void Str(const std::string& s) { bytes_ += sizeof(uint32_t) + s.size(); }
  size_t bytes() const { return bytes_; }

 private:
  size_t bytes_ = 0;
};

// Writes into room made for it beforehand: exactly the bytes a Sizer counted for the same calls.
class Writer {
 public:
  explicit Writer(char* at) : at_(at) {}
  template <typename T>
  void Int(T v) {
    static_assert(std::is_integral_v<T>);
    std::memcpy(at_, &v, sizeof(T));  // little-endian: the machines bulkhead runs on
    at_ += sizeof(T);
  }
  void Str(const std::string& s) {
    Int(static_cast<uint32_t>(s.size()));
    std::memcpy(at_, s.data(), s.size());
    at_ += s.size();
  }

 private:
  char* at_;
};

// Reads what Writer wrote; the first shortfall sets error() and makes every later read a no-op.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  template <typename T>
  T Int(const char* what) {
    T v{};
    if (!Need(sizeof(T), what)) return v;
    std::memcpy(&v, in_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string Str(const char* what) {
    uint32_t n = Int<uint32_t>(what);
    if (!Need(n, what)) return {};
    std::string s(in_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  void Fail(std::string problem) {
    if (error_.empty()) error_ = std::move(problem);
  }
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  size_t left() const { return in_.size() - pos_; }
  size_t pos() const { return pos_; }

 private:
  bool Need(size_t n, const char* what) {
    if (!ok()) return false;
    if (n <= left()) return true;
    Fail(std::string("truncated at byte ") + std::to_string(pos_) + " reading " + what);
    return false;
  }
  std::string_view in_;
  size_t pos_ = 0;
  std::string error_;
};

template <typename W>
void EncodeJob(W& w, const JobRecord& j, bool insert) {
  if (insert) w.Str(j.jid);
  w.Int(static_cast<uint8_t>(j.state));
  w.Str(j.queue);
  if (insert) w.Str(j.jobtype);
  w.Int(j.score);
  w.Int(j.enqueued_us);
  if (insert) w.Int(j.reserve_for_s);
  w.Str(j.payload);
}

void DecodeState(Reader& r, JobRecord& j) {
  uint8_t state = r.Int<uint8_t>("a job state");
  if (state > kLastJobState) r.Fail("unknown job state " + std::to_string(state));
  j.state = static_cast<JobState>(state);
}

void DecodeJob(Reader& r, JobRecord& j, bool insert) {
  if (insert) j.jid = r.Str("a jid");
  DecodeState(r, j);
  j.queue = r.Str("a queue");
  if (insert) j.jobtype = r.Str("a jobtype");
  j.score = r.Int<int64_t>("a score");
  j.enqueued_us = r.Int<int64_t>("an enqueued time");
  if (insert) j.reserve_for_s = r.Int<int32_t>("a reservation");
  j.payload = r.Str("a payload");
}

template <typename W>
void EncodeHostState(W& w, const HostStateRecord& h) {
  w.Str(h.host);
  w.Int(h.breaker_open_until_us);
  w.Int(h.breaker_series_openings);
  w.Int(h.breaker_openings);
  w.Int(h.failing_since_us);
  w.Int(static_cast<uint8_t>(h.unavailable));
  w.Int(h.retry_after_until_us);
}

void DecodeHostState(Reader& r, HostStateRecord& h) {
  h.host = r.Str("a host");
  h.breaker_open_until_us = r.Int<int64_t>("a breaker time");
  h.breaker_series_openings = r.Int<int32_t>("a breaker series");
  h.breaker_openings = r.Int<int64_t>("a breaker count");
  h.failing_since_us = r.Int<int64_t>("a failing time");
  h.unavailable = r.Int<uint8_t>("an unavailable flag") != 0;
  h.retry_after_until_us = r.Int<int64_t>("a Retry-After time");
}

template <typename W>
void EncodeChange(W& w, const Change& c) {
  using K = Change::Kind;
  w.Int(static_cast<uint8_t>(c.kind));
  w.Int(c.id);
  switch (c.kind) {
    case K::kInsertJob:
    case K::kUpdateJob:
      EncodeJob(w, c.job, c.kind == K::kInsertJob);
      break;
    case K::kUpdateState:
      w.Int(static_cast<uint8_t>(c.job.state));
      w.Int(c.job.score);
      break;
    case K::kDeleteJob:
    case K::kDeleteAll:
      break;
    case K::kAddCounter:
    case K::kPutUniqueLock:
    case K::kSetCronFiring:
      w.Str(c.name);
      if (c.kind == K::kPutUniqueLock) w.Str(c.value);
      w.Int(c.delta);
      break;
    case K::kSetPaused:
      w.Str(c.name);
      w.Int(static_cast<uint8_t>(c.flag));
      break;
    case K::kPutSigningKey:
    case K::kPutRecord:
    case K::kDeleteRecord:
      w.Str(c.name);
      if (c.kind != K::kPutSigningKey) w.Str(c.key);
      if (c.kind != K::kDeleteRecord) w.Str(c.value);
      break;
    case K::kDeleteSigningKey:
    case K::kDeleteHostState:
    case K::kDeleteUniqueLock:
      w.Str(c.name);
      break;
    case K::kPutHostState:
      EncodeHostState(w, c.host_state);
      break;
  }
}

Change DecodeChange(Reader& r) {
  using K = Change::Kind;
  uint8_t kind = r.Int<uint8_t>("a change kind");
  if (r.ok() && kind > kLastKind) r.Fail("unknown change kind " + std::to_string(kind));
  Change c(static_cast<K>(r.ok() ? kind : 0));
  c.id = r.Int<int64_t>("a row id");
  if (!r.ok()) return c;
  switch (c.kind) {
    case K::kInsertJob:
    case K::kUpdateJob:
      DecodeJob(r, c.job, c.kind == K::kInsertJob);
      break;
    case K::kUpdateState:
      DecodeState(r, c.job);
      c.job.score = r.Int<int64_t>("a score");
      break;
    case K::kDeleteJob:
    case K::kDeleteAll:
      break;
    case K::kAddCounter:
    case K::kPutUniqueLock:
    case K::kSetCronFiring:
      c.name = r.Str("a name");
      if (c.kind == K::kPutUniqueLock) c.value = r.Str("a lock holder");
      c.delta = r.Int<int64_t>("a number");
      break;
    case K::kSetPaused:
      c.name = r.Str("a queue");
      c.flag = r.Int<uint8_t>("a paused flag") != 0;
      break;
    case K::kPutSigningKey:
    case K::kPutRecord:
    case K::kDeleteRecord:
      c.name = r.Str("a name");
      if (c.kind != K::kPutSigningKey) c.key = r.Str("a record key");
      if (c.kind != K::kDeleteRecord) c.value = r.Str("a value");
      break;
    case K::kDeleteSigningKey:
    case K::kDeleteHostState:
    case K::kDeleteUniqueLock:
      c.name = r.Str("a name");
      break;
    case K::kPutHostState:
      DecodeHostState(r, c.host_state);
      break;
  }
  return c;
}

}  // namespace

void EncodeChanges(const std::vector<Change>& changes, std::string& out) {
  // Sized first, then written in place: one growth of `out` instead of one per field.
  Sizer size;
  size.Int(static_cast<uint32_t>(changes.size()));
  for (const Change& c : changes) EncodeChange(size, c);
  const size_t at = out.size();
  out.resize(at + size.bytes());
  Writer w(out.data() + at);
  w.Int(static_cast<uint32_t>(changes.size()));
  for (const Change& c : changes) EncodeChange(w, c);
}

Result<std::vector<Change>> DecodeChanges(std::string_view in) {
  Reader r(in);
  std::vector<Change> changes;
  while (r.ok() && r.left() > 0) {
    uint32_t count = r.Int<uint32_t>("a change count");
    // Every change takes at least 9 bytes: a count beyond that is damage, not an allocation.
    if (r.ok() && count > r.left() / 9) {
      r.Fail("a change count of " + std::to_string(count) + " at byte " +
             std::to_string(r.pos() - 4));
    }
    if (r.ok()) changes.reserve(changes.size() + count);
    for (uint32_t i = 0; i < count && r.ok(); ++i) changes.push_back(DecodeChange(r));
  }
  if (!r.ok()) return Status::InvalidArgument("undecodable changes: " + r.error());
  return changes;
}

}  // namespace bulkhead
