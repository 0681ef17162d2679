#include "bulkhead/store/redo_log.h"

#include <fcntl.h>
#include <isa-l/crc.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string_view>

#include "bulkhead/store/change_codec.h"

namespace bulkhead {
namespace {

constexpr char kFileMagic[4] = {'B', 'H', 'R', 'L'};
constexpr uint32_t kVersion = 2;
constexpr uint64_t kVersion1HeaderBytes = 16;  // magic, version, the one region's epoch
constexpr char kRecordMagic[4] = {'B', 'H', 'R', '1'};
constexpr size_t kRecordHeaderBytes = 12;  // magic, body length, CRC
constexpr size_t kBodyPrefixBytes = 16;    // epoch, number

// zlib's CRC-32 (RFC 1952's), as ISA-L's crc32_gzip_refl computes it with an initial 0.
uint32_t Crc(std::string_view body) {
  return crc32_gzip_refl(0, reinterpret_cast<const unsigned char*>(body.data()), body.size());
}

template <typename T>
T GetInt(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

template <typename T>
void PutInt(char* p, T v) {
  std::memcpy(p, &v, sizeof(v));
}

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

// The record of epoch `epoch` at `pos`, whole and intact (its body), or nothing.
std::optional<std::string_view> RecordAt(std::string_view file, size_t pos, uint64_t epoch) {
  std::string_view rest = file.substr(pos);
  if (rest.size() < kRecordHeaderBytes + kBodyPrefixBytes) return std::nullopt;
  if (std::memcmp(rest.data(), kRecordMagic, sizeof(kRecordMagic)) != 0) return std::nullopt;
  uint32_t length = GetInt<uint32_t>(rest.data() + 4);
  if (length < kBodyPrefixBytes || length > rest.size() - kRecordHeaderBytes) return std::nullopt;
  std::string_view body = rest.substr(kRecordHeaderBytes, length);
  if (Crc(body) != GetInt<uint32_t>(rest.data() + 8)) return std::nullopt;
  if (GetInt<uint64_t>(body.data()) != epoch) return std::nullopt;
  return body;
}

// Damage beyond the end of the log at `end`: a record of `epoch` numbered after `last_seq`.
Status FindLaterRecord(std::string_view file, size_t end, uint64_t epoch, int64_t last_seq) {
  std::string_view magic(kRecordMagic, sizeof(kRecordMagic));
  for (size_t pos = file.find(magic, end + 1); pos != std::string_view::npos;
       pos = file.find(magic, pos + 1)) {
    auto body = RecordAt(file, pos, epoch);
    if (!body) continue;
    int64_t seq = GetInt<int64_t>(body->data() + 8);
    if (seq > last_seq) {
      return Status::InvalidArgument("the record at byte " + std::to_string(end) +
                                     " is damaged: record " + std::to_string(seq) +
                                     " follows it at byte " + std::to_string(pos));
    }
  }
  return Status::Ok();
}

// Appends the records of the region [begin, limit) of `file` whose epoch is `epoch` to `out`.
Status ReadRegion(std::string_view file, size_t begin, size_t limit, uint64_t epoch,
                  std::vector<RedoLog::Record>& out) {
  std::string_view region = file.substr(0, limit);  // no record runs past the region's end
  size_t pos = begin;
  int64_t last_seq = 0;
  while (auto body = RecordAt(region, pos, epoch)) {
    RedoLog::Record record;
    record.seq = GetInt<int64_t>(body->data() + 8);
    auto changes = DecodeChanges(body->substr(kBodyPrefixBytes));
    if (!changes.ok()) {
      return Status::InvalidArgument("at byte " + std::to_string(pos) + ": " +
                                     changes.status().message());
    }
    record.changes = std::move(*changes);
    last_seq = record.seq;
    out.push_back(std::move(record));
    pos += kRecordHeaderBytes + body->size();
  }
  return FindLaterRecord(region, pos, epoch, last_seq);
}

}  // namespace

Result<std::unique_ptr<RedoLog>> RedoLog::Open(const std::string& path, uint64_t region_bytes,
                                               uint64_t switch_bytes) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Status::Unavailable(Errno("cannot open " + path));
  const uint64_t size = kHeaderBytes + 2 * region_bytes;
  // Blocks first: an append then never meets a full disk (SIGBUS through the mapping).
  int rc = ::posix_fallocate(fd, 0, static_cast<off_t>(size));
  if (rc == 0 && ::ftruncate(fd, static_cast<off_t>(size)) != 0) rc = errno;
  void* map = rc == 0 ? ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : nullptr;
  if (rc != 0 || map == MAP_FAILED) {
    if (rc != 0) errno = rc;
    Status err = Status::Unavailable(
        Errno("cannot allocate and map " + std::to_string(size) + " bytes for " + path));
    ::close(fd);
    return err;
  }
  std::unique_ptr<RedoLog> log(new RedoLog(path, fd, static_cast<char*>(map), size, switch_bytes));
  // New epochs follow the largest the file used (either version), so no remains match them.
  if (std::memcmp(log->map_, kFileMagic, sizeof(kFileMagic)) == 0) {
    log->last_epoch_ = GetInt<uint64_t>(log->map_ + 8);
    if (GetInt<uint32_t>(log->map_ + 4) == kVersion)
      log->last_epoch_ = std::max(log->last_epoch_, GetInt<uint64_t>(log->map_ + 16));
  }
  std::memcpy(log->map_, kFileMagic, sizeof(kFileMagic));
  PutInt<uint32_t>(log->map_ + 4, kVersion);
  log->regions_[0].begin = kHeaderBytes;
  log->regions_[0].limit = log->regions_[1].begin = kHeaderBytes + region_bytes;
  log->regions_[1].limit = size;
  log->Reset();
  return log;
}

RedoLog::~RedoLog() {
  ::munmap(map_, size_);
  ::close(fd_);
}

Status RedoLog::Append(int64_t seq, const std::vector<const std::vector<Change>*>& parts) {
  buf_.assign(kRecordHeaderBytes + kBodyPrefixBytes, '\0');
  for (const std::vector<Change>* changes : parts) EncodeChanges(*changes, buf_);
  Region* region = &regions_[active_];
  const Region& other = regions_[1 - active_];
  bool fits = buf_.size() <= region->limit - region->end;
  bool move = !fits || region->end - region->begin >= switch_bytes_;
  if (move && OtherFree() && buf_.size() <= other.limit - other.begin) {
    active_ = 1 - active_;
    ResetRegion(active_);
    region = &regions_[active_];
    fits = true;
  }
  if (!fits) {
    return Status::ResourceExhausted("the redo log " + path_ + " has no room for " +
                                     std::to_string(buf_.size()) + " bytes");
  }
  char* record = buf_.data();
  PutInt<uint64_t>(record + kRecordHeaderBytes, region->epoch);
  PutInt<int64_t>(record + kRecordHeaderBytes + 8, seq);
  std::string_view body(record + kRecordHeaderBytes, buf_.size() - kRecordHeaderBytes);
  std::memcpy(record, kRecordMagic, sizeof(kRecordMagic));
  PutInt<uint32_t>(record + 4, static_cast<uint32_t>(body.size()));
  PutInt<uint32_t>(record + 8, Crc(body));
  std::memcpy(map_ + region->end, record, buf_.size());
  region->end += buf_.size();
  region->last_seq = seq;
  return Status::Ok();
}

bool RedoLog::Committed(int64_t seq) {
  committed_ = std::max(committed_, seq);
  return OtherFree();
}

void RedoLog::Reset() {
  ResetRegion(0);
  ResetRegion(1);
  active_ = 0;
}

void RedoLog::ResetRegion(int r) {
  Region& region = regions_[r];
  region.epoch = ++last_epoch_;
  // Aligned: the page cache never holds half of it.
  PutInt<uint64_t>(map_ + 8 + 8 * static_cast<uint64_t>(r), region.epoch);
  region.end = region.begin;
  region.last_seq = 0;
}

Result<RedoLog::Contents> RedoLog::Read(const std::string& path) {
  Contents contents;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return contents;
    return Status::Unavailable(Errno("cannot stat " + path));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Unavailable("cannot read " + path);
  std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (file.empty()) return contents;
  const uint32_t version =
      file.size() >= kVersion1HeaderBytes ? GetInt<uint32_t>(file.data() + 4) : 0;
  const uint64_t header = version == kVersion ? kHeaderBytes : kVersion1HeaderBytes;
  if (file.size() < header || std::memcmp(file.data(), kFileMagic, 4) != 0 ||
      (version != 1 && version != kVersion) ||
      (version == kVersion && (file.size() - header) % 2 != 0)) {
    return Status::InvalidArgument(path + " is not a redo log of this version (its header)");
  }
  // Version 1: one region; version 2: two of equal size, each with its epoch.
  const int regions = version == kVersion ? 2 : 1;
  const uint64_t region_bytes = (file.size() - header) / static_cast<uint64_t>(regions);
  for (int r = 0; r < regions; ++r) {
    uint64_t begin = header + static_cast<uint64_t>(r) * region_bytes;
    uint64_t epoch = GetInt<uint64_t>(file.data() + 8 + 8 * static_cast<uint64_t>(r));
    Status s = ReadRegion(file, begin, begin + region_bytes, epoch, contents.records);
    if (!s.ok()) return Status::InvalidArgument(path + ": " + s.message());
  }
  std::stable_sort(contents.records.begin(), contents.records.end(),
                   [](const Record& a, const Record& b) { return a.seq < b.seq; });
  for (size_t i = 1; i < contents.records.size(); ++i) {
    if (contents.records[i].seq == contents.records[i - 1].seq) {
      return Status::InvalidArgument(path + ": record " + std::to_string(contents.records[i].seq) +
                                     " is in both regions");
    }
  }
  return contents;
}

}  // namespace bulkhead
