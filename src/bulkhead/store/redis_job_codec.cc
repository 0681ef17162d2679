#include "bulkhead/store/redis_job_codec.h"

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "bulkhead/util/clock.h"
#include "bulkhead/util/time_format.h"

namespace bulkhead {
namespace {

std::string EscapeJobtype(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '%') {
      out += "%25";
    } else if (c == '\n') {
      out += "%0A";
    } else {
      out += c;
    }
  }
  return out;
}

std::string UnescapeJobtype(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && s.substr(i, 3) == "%25") {
      out += '%';
      i += 2;
    } else if (s[i] == '%' && s.substr(i, 3) == "%0A") {
      out += '\n';
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

template <typename T>
bool ParseNumber(std::string_view s, T& out) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size() && !s.empty();
}

struct Header {
  JobRecord job;
  bool stale_enqueued_at = false;
};

Result<Header> ParseHeader(std::string_view jid, std::string_view header, int64_t score) {
  auto bad = [&](const std::string& what) {
    return Status::InvalidArgument("stored job " + std::string(jid) + ": " + what);
  };
  // STATE|RESERVE_FOR|ENQUEUED_US|NODE|QUEUE|JOBTYPE; JOBTYPE is last and escaped, so the first
  // five '|' split the fields.
  std::string_view field[6];
  std::string_view rest = header;
  for (int i = 0; i < 5; ++i) {
    size_t bar = rest.find('|');
    if (bar == std::string_view::npos) return bad("header has fewer than 6 fields");
    field[i] = rest.substr(0, bar);
    rest.remove_prefix(bar + 1);
  }
  field[5] = rest;
  Header h;
  h.job.jid = std::string(jid);
  int state = 0;
  if (!ParseNumber(field[0], state) || state < 0 || state > 4) {
    return bad("unknown state \"" + std::string(field[0]) + "\"");
  }
  h.job.state = static_cast<JobState>(state);
  if (!ParseNumber(field[1], h.job.reserve_for_s)) return bad("reserve_for is not a number");
  std::string_view enq = field[2];
  if (enq.starts_with('+')) {
    h.stale_enqueued_at = true;
    enq.remove_prefix(1);
  }
  if (!ParseNumber(enq, h.job.enqueued_us)) return bad("enqueued time is not a number");
  h.job.queue = std::string(field[4]);
  h.job.jobtype = UnescapeJobtype(field[5]);
  h.job.score = score;
  return h;
}

// Compact payloads (redis_scripts/README.md, "Job value"): the members the header and the hash
// field already hold are left out of the stored JSON and put back when the job is read.

// One member of a JSON object: its key as written (between the quotes) and the member's text.
struct Member {
  std::string_view key;
  std::string_view text;
};

constexpr size_t kNpos = std::string_view::npos;

// The index after the JSON string starting at s[i] ('"'), or kNpos.
size_t SkipString(std::string_view s, size_t i) {
  for (++i; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
    } else if (s[i] == '"') {
      return i + 1;
    }
  }
  return kNpos;
}

// The index after the JSON value starting at s[i] (the ',' or '}' that ends a scalar), or kNpos.
size_t SkipValue(std::string_view s, size_t i) {
  int depth = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == '"') {
      i = SkipString(s, i);
      if (i == kNpos || depth == 0) return i;
    } else if (c == '{' || c == '[') {
      ++depth;
      ++i;
    } else if (c == '}' || c == ']') {
      if (depth == 0) return i;
      ++i;
      if (--depth == 0) return i;
    } else if (c == ',' && depth == 0) {
      return i;
    } else {
      ++i;
    }
  }
  return kNpos;
}

// The members of `s` when it is exactly '{' + the members joined by ',' + '}' (no whitespace
// between them) and their keys are strictly increasing (as nlohmann::json writes objects), so
// that leaving members out and putting them back at their key's place gives `s` back.
std::optional<std::vector<Member>> SortedMembers(std::string_view s) {
  if (s.size() < 2 || s.front() != '{' || s.back() != '}') return std::nullopt;
  std::vector<Member> out;
  size_t i = 1;
  while (i < s.size() - 1) {
    if (s[i] != '"') return std::nullopt;
    size_t key_end = SkipString(s, i);
    if (key_end == kNpos || key_end >= s.size() || s[key_end] != ':') return std::nullopt;
    size_t end = SkipValue(s, key_end + 1);
    if (end == kNpos || end == key_end + 1 || end >= s.size()) return std::nullopt;
    std::string_view key = s.substr(i + 1, key_end - i - 2);
    if (!out.empty() && !(out.back().key < key)) return std::nullopt;
    out.push_back({key, s.substr(i, end - i)});
    if (end == s.size() - 1) return out;
    if (s[end] != ',' || end + 1 >= s.size() - 1) return std::nullopt;
    i = end + 1;
  }
  return out;
}

void AppendJsonString(std::string& out, std::string_view s) {
  // Printable ASCII other than '"' and '\\' is written as it is (every jid, jobtype and queue in
  // practice, and this runs for each of them at every PUSH and FETCH); anything else as nlohmann
  // writes it (escapes, invalid UTF-8 replaced).
  bool plain = std::all_of(s.begin(), s.end(),
                           [](char c) { return c >= 0x20 && c <= 0x7e && c != '"' && c != '\\'; });
  if (plain) {
    out += '"';
    out += s;
    out += '"';
    return;
  }
  out +=
      nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The members a compact payload may leave out, in key order, with their flag letters.
enum Omitted { kCreatedAt, kEnqueuedAt, kJid, kJobtype, kQueue, kOmittable };
constexpr std::string_view kOmittedKey[kOmittable] = {"created_at", "enqueued_at", "jid", "jobtype",
                                                      "queue"};
// Upper case: CREATED's base-36 digits are lower case.
constexpr char kOmittedFlag[kOmittable] = {'C', 'E', 'J', 'T', 'Q'};

// Appends the member `which` of `job` as it is written when left out (created_at: at
// created_us). Appended, not returned: PUSH compares and FETCH writes five of them per job.
void AppendOmittedMember(std::string& out, int which, const JobRecord& job, int64_t created_us) {
  out += '"';
  out += kOmittedKey[which];
  out += "\":";
  switch (which) {
    case kCreatedAt:
    case kEnqueuedAt:
      out += '"';
      AppendRfc3339(out, FromUnixMicros(which == kCreatedAt ? created_us : job.enqueued_us));
      out += '"';
      return;
    case kJid:
      return AppendJsonString(out, job.jid);
    case kJobtype:
      return AppendJsonString(out, job.jobtype);
    default:
      return AppendJsonString(out, job.queue);
  }
}

// `job`'s payload in the stored form: "~FLAGS[CREATED]~" + the JSON without the members FLAGS
// name (CREATED: created_at's µs in base 36, when 'C' is among them), or the JSON itself when
// none can be left out exactly.
void AppendStoredPayload(std::string& v, const JobRecord& job) {
  auto members = SortedMembers(job.payload);
  if (!members) {
    v += job.payload;
    return;
  }
  bool omit[kOmittable] = {};
  int64_t created_us = 0;
  size_t omitted = 0;
  std::string scratch;  // one member as it would be written back, reused
  for (const Member& m : *members) {
    for (int w = 0; w < kOmittable; ++w) {
      if (m.key != kOmittedKey[w]) continue;
      if (w == kEnqueuedAt && job.enqueued_us <= 0) break;
      if (w == kCreatedAt) {
        std::string_view value = m.text.substr(kOmittedKey[w].size() + 3);
        if (value.size() < 2 || value.front() != '"' || value.back() != '"') break;
        auto t = ParseRfc3339(value.substr(1, value.size() - 2));
        if (!t.ok()) break;
        created_us = ToUnixMicros(*t);
      }
      scratch.clear();
      AppendOmittedMember(scratch, w, job, created_us);
      omit[w] = scratch == m.text;
      omitted += omit[w] ? 1 : 0;
      break;
    }
  }
  if (omitted == 0) {
    v += job.payload;
    return;
  }
  v += '~';
  for (int w = 0; w < kOmittable; ++w) {
    if (omit[w]) v += kOmittedFlag[w];
  }
  if (omit[kCreatedAt]) {
    char buf[16];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, created_us, 36);
    v.append(buf, ec == std::errc() ? end : buf);
  }
  v += "~{";
  bool first = true;
  for (const Member& m : *members) {
    bool left_out = false;
    for (int w = 0; w < kOmittable; ++w) left_out |= omit[w] && m.key == kOmittedKey[w];
    if (left_out) continue;
    if (!first) v += ',';
    v += m.text;
    first = false;
  }
  v += '}';
}

// Whether `stored` is a compact payload that left out the member of `flag`.
bool StoredWithout(std::string_view stored, char flag) {
  if (!stored.starts_with('~')) return false;
  size_t close = stored.find('~', 1);
  return close != kNpos && stored.substr(1, close - 1).find(flag) != kNpos;
}

// The payload of a stored one (AppendStoredPayload's inverse); `job` holds the header's fields
// (its enqueued_us is the header's time). Nullopt when `stored` is damaged.
std::optional<std::string> RestorePayload(std::string_view stored, const JobRecord& job) {
  if (!stored.starts_with('~')) return std::string(stored);
  size_t close = stored.find('~', 1);
  if (close == kNpos) return std::nullopt;
  std::string_view flags = stored.substr(1, close - 1);
  bool put[kOmittable] = {};
  size_t i = 0;
  for (int w = 0; w < kOmittable; ++w) {
    if (i < flags.size() && flags[i] == kOmittedFlag[w]) {
      put[w] = true;
      ++i;
    }
  }
  int64_t created_us = 0;
  if (put[kCreatedAt]) {
    std::string_view digits = flags.substr(i);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), created_us, 36);
    if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty()) {
      return std::nullopt;
    }
  }
  if (!put[kCreatedAt] && i != flags.size()) return std::nullopt;
  auto members = SortedMembers(stored.substr(close + 1));
  if (!members) return std::nullopt;
  std::string out;
  out.reserve(stored.size() + 160);  // the members put back: two times, jid, jobtype, queue
  out += '{';
  int next = 0;
  auto put_before = [&](std::string_view key) {
    for (; next < kOmittable && (key.empty() || kOmittedKey[next] < key); ++next) {
      if (!put[next]) continue;
      if (out.size() > 1) out += ',';
      AppendOmittedMember(out, next, job, created_us);
    }
  };
  for (const Member& m : *members) {
    put_before(m.key);
    if (out.size() > 1) out += ',';
    out += m.text;
  }
  put_before({});
  out += '}';
  return out;
}

}  // namespace

std::string EncodeRedisJob(const JobRecord& job, std::string_view node) {
  std::string v;
  v.reserve(job.payload.size() + job.queue.size() + job.jobtype.size() + 48);
  auto number = [&v](int64_t n) {
    char buf[24];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, n);
    v.append(buf, end);
  };
  number(static_cast<int>(job.state));
  v += '|';
  number(job.reserve_for_s);
  v += '|';
  number(job.enqueued_us);
  v += '|';
  if (job.state == JobState::kWorking) v += node;
  v += '|';
  v += job.queue;
  v += '|';
  v += EscapeJobtype(job.jobtype);
  v += '\n';
  AppendStoredPayload(v, job);
  return v;
}

Result<JobRecord> DecodeRedisJobHeader(std::string_view jid, std::string_view header,
                                       int64_t score) {
  auto h = ParseHeader(jid, header, score);
  if (!h.ok()) return h.status();
  return std::move(h->job);
}

Result<JobRecord> DecodeRedisJob(std::string_view jid, std::string_view value, int64_t score) {
  size_t nl = value.find('\n');
  if (nl == std::string_view::npos) {
    return Status::InvalidArgument("stored job " + std::string(jid) + ": no header");
  }
  auto h = ParseHeader(jid, value.substr(0, nl), score);
  if (!h.ok()) return h.status();
  JobRecord job = std::move(h->job);
  auto payload = RestorePayload(value.substr(nl + 1), job);
  if (!payload) {
    return Status::InvalidArgument("stored job " + std::string(jid) + ": damaged compact payload");
  }
  job.payload = std::move(*payload);
  // A payload stored without enqueued_at got the header's time; any other gets it rewritten.
  if (h->stale_enqueued_at && !StoredWithout(value.substr(nl + 1), kOmittedFlag[kEnqueuedAt])) {
    auto doc = nlohmann::json::parse(job.payload, nullptr, /*allow_exceptions=*/false);
    if (doc.is_object()) {
      doc["enqueued_at"] = FormatRfc3339(FromUnixMicros(job.enqueued_us));
      job.payload = doc.dump();
    }
  }
  return job;
}

}  // namespace bulkhead
