#include "bulkhead/store/redis_job_codec.h"

#include <charconv>
#include <nlohmann/json.hpp>

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

}  // namespace

std::string EncodeRedisJob(const JobRecord& job, std::string_view node) {
  std::string v;
  v.reserve(job.payload.size() + job.queue.size() + job.jobtype.size() + 48);
  v += std::to_string(static_cast<int>(job.state));
  v += '|';
  v += std::to_string(job.reserve_for_s);
  v += '|';
  v += std::to_string(job.enqueued_us);
  v += '|';
  if (job.state == JobState::kWorking) v += node;
  v += '|';
  v += job.queue;
  v += '|';
  v += EscapeJobtype(job.jobtype);
  v += '\n';
  v += job.payload;
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
  job.payload = std::string(value.substr(nl + 1));
  if (h->stale_enqueued_at) {
    auto doc = nlohmann::json::parse(job.payload, nullptr, /*allow_exceptions=*/false);
    if (doc.is_object()) {
      doc["enqueued_at"] = FormatRfc3339(FromUnixMicros(job.enqueued_us));
      job.payload = doc.dump();
    }
  }
  return job;
}

}  // namespace bulkhead
