#include "bulkhead/store/redo_log.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string_view>

#include "bulkhead/store/change_codec.h"

namespace bulkhead {
namespace {

constexpr char kFileMagic[4] = {'B', 'H', 'R', 'L'};
constexpr uint32_t kVersion = 1;
constexpr char kRecordMagic[4] = {'B', 'H', 'R', '1'};
constexpr size_t kRecordHeaderBytes = 12;  // magic, body length, CRC
constexpr size_t kBodyPrefixBytes = 16;    // epoch, number

uint32_t Crc(std::string_view body) {
  return static_cast<uint32_t>(
      crc32(0L, reinterpret_cast<const Bytef*>(body.data()), static_cast<uInt>(body.size())));
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

}  // namespace

Result<std::unique_ptr<RedoLog>> RedoLog::Open(const std::string& path, uint64_t capacity) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Status::Unavailable(Errno("cannot open " + path));
  const uint64_t size = kHeaderBytes + capacity;
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
  std::unique_ptr<RedoLog> log(new RedoLog(path, fd, static_cast<char*>(map), size));
  if (std::memcmp(log->map_, kFileMagic, sizeof(kFileMagic)) == 0) {
    log->epoch_ = GetInt<uint64_t>(log->map_ + 8);
  }
  std::memcpy(log->map_, kFileMagic, sizeof(kFileMagic));
  PutInt<uint32_t>(log->map_ + 4, kVersion);
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
  if (buf_.size() > size_ - end_) {
    return Status::ResourceExhausted("the redo log " + path_ + " has no room for " +
                                     std::to_string(buf_.size()) + " bytes");
  }
  char* record = buf_.data();
  PutInt<uint64_t>(record + kRecordHeaderBytes, epoch_);
  PutInt<int64_t>(record + kRecordHeaderBytes + 8, seq);
  std::string_view body(record + kRecordHeaderBytes, buf_.size() - kRecordHeaderBytes);
  std::memcpy(record, kRecordMagic, sizeof(kRecordMagic));
  PutInt<uint32_t>(record + 4, static_cast<uint32_t>(body.size()));
  PutInt<uint32_t>(record + 8, Crc(body));
  std::memcpy(map_ + end_, record, buf_.size());
  end_ += buf_.size();
  return Status::Ok();
}

void RedoLog::Reset() {
  ++epoch_;
  PutInt<uint64_t>(map_ + 8, epoch_);  // aligned: the page cache never holds half of it
  end_ = kHeaderBytes;
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
  if (file.size() < kHeaderBytes || std::memcmp(file.data(), kFileMagic, 4) != 0 ||
      GetInt<uint32_t>(file.data() + 4) != kVersion) {
    return Status::InvalidArgument(path + " is not a redo log of this version (its header)");
  }
  const uint64_t epoch = GetInt<uint64_t>(file.data() + 8);
  size_t pos = kHeaderBytes;
  int64_t last_seq = 0;
  while (auto body = RecordAt(file, pos, epoch)) {
    Record record;
    record.seq = GetInt<int64_t>(body->data() + 8);
    auto changes = DecodeChanges(body->substr(kBodyPrefixBytes));
    if (!changes.ok()) {
      return Status::InvalidArgument(path + " at byte " + std::to_string(pos) + ": " +
                                     changes.status().message());
    }
    record.changes = std::move(*changes);
    last_seq = record.seq;
    contents.records.push_back(std::move(record));
    pos += kRecordHeaderBytes + body->size();
  }
  Status later = FindLaterRecord(file, pos, epoch, last_seq);
  if (!later.ok()) return Status::InvalidArgument(path + ": " + later.message());
  return contents;
}

}  // namespace bulkhead
