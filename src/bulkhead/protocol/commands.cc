#include "bulkhead/protocol/commands.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "bulkhead/engine/engine.h"
#include "bulkhead/engine/job_array_parser.h"
#include "bulkhead/engine/job_parser.h"
#include "bulkhead/protocol/batch_commands.h"
#include "bulkhead/protocol/fwp_server.h"
#include "bulkhead/protocol/pwdhash.h"
#include "bulkhead/protocol/replies.h"
#include "bulkhead/protocol/session.h"
#include "bulkhead/protocol/track_commands.h"
#include "bulkhead/util/ascii.h"
#include "bulkhead/util/json.h"
#include "bulkhead/util/log_limiter.h"

namespace bulkhead {
namespace {

using nlohmann::json;

// Parses a command's JSON payload (nesting bounded by max_json_depth); on failure replies
// "invalid JSON: ..." and returns null with *ok false.
json ParseOrReply(Session& s, std::string_view text, Responder& r, bool* ok) {
  auto doc = ParseJson(text, s.server().config().max_json_depth);
  *ok = doc.ok();
  if (!*ok) {
    r.Error(doc.status().message());
    return json();
  }
  return std::move(*doc);
}

// The words of `s` between runs of ASCII whitespace (what `istream >> std::string` splits on in
// the C locale), without a stream: FETCH's queue list is split once a job.
std::vector<std::string> SplitWords(std::string_view s) {
  constexpr std::string_view kSpace = " \t\n\v\f\r";
  std::vector<std::string> out;
  for (size_t begin = s.find_first_not_of(kSpace); begin != std::string_view::npos;) {
    size_t end = s.find_first_of(kSpace, begin);
    out.emplace_back(s.substr(begin, end == std::string_view::npos ? end : end - begin));
    begin = end == std::string_view::npos ? end : s.find_first_not_of(kSpace, end);
  }
  return out;
}

std::string StringField(const json& doc, const char* key) {
  auto it = doc.find(key);
  return it != doc.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The jid of a payload that is exactly {"jid":"<jid>"} — what clients send for ACK — read without
// building a JSON document; nullopt for any other shape (the caller then parses it fully).
std::optional<std::string_view> SimpleJidPayload(std::string_view s) {
  constexpr std::string_view kPrefix = "{\"jid\":\"";
  constexpr std::string_view kSuffix = "\"}";
  if (s.size() < kPrefix.size() + kSuffix.size() || !s.starts_with(kPrefix) ||
      !s.ends_with(kSuffix)) {
    return std::nullopt;
  }
  std::string_view jid = s.substr(kPrefix.size(), s.size() - kPrefix.size() - kSuffix.size());
  for (char c : jid) {
    if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20) return std::nullopt;
  }
  return jid;
}

// The start of a payload for an error text that quotes it (as Faktory's "invalid ACK <data>"),
// cut at 200 bytes so that a huge line is not echoed back whole.
std::string Quote(std::string_view payload) {
  constexpr size_t kMax = 200;
  if (payload.size() <= kMax) return std::string(payload);
  size_t cut = kMax;
  while (cut > 0 && (static_cast<unsigned char>(payload[cut]) & 0xC0) == 0x80) --cut;  // UTF-8
  return std::string(payload.substr(0, cut)) + "...";
}

// The job-type default retry count, written into a job pushed without one (as Faktory stores it).
RetryDefault RetryDefaultOf(const Engine& engine) {
  return
      [&config = engine.config()](const std::string& jobtype) { return config.RetryFor(jobtype); };
}

void Reply(Responder& r, Status s) {
  if (s.ok()) {
    r.Ok();
  } else if (IsNotUnique(s)) {
    r.Error(kNotUniqueMessage, kNotUniqueCode);  // -NOTUNIQUE Job not unique
  } else {
    r.Error(s.message());
  }
}

// Checks a HELLO's pwdhash when a password is set. Repeated failures from one address are slowed
// down (LoginThrottle): a HELLO that comes too soon is refused without a check. Replies and closes
// on failure; true when the client may go on.
bool CheckPassword(Session& s, const json& doc, Responder& r) {
  FwpServer& server = s.server();
  const std::string& password = server.config().password;
  if (password.empty()) return true;
  Duration wait = server.login_throttle().Wait(s.peer());
  if (wait > Duration::zero()) {
    GuardCounters::Bump(server.guards().logins_throttled);
    char seconds[32];
    std::snprintf(seconds, sizeof(seconds), "%.1f", std::chrono::duration<double>(wait).count());
    r.ErrorAndClose(std::string(replies::kLoginThrottled) + s.peer() +
                    ", next attempt accepted in " + seconds + " s");
    return false;
  }
  auto v = doc.find("v");
  int version = v != doc.end() && v->is_number_integer() ? v->get<int>() : 1;
  int iterations = version < 2 ? 1 : s.iterations();
  std::string expected = PasswordHash(password, s.salt(), iterations);
  if (!ConstantTimeEquals(StringField(doc, "pwdhash"), expected)) {
    GuardCounters::Bump(server.guards().login_failures);
    int failures = server.login_throttle().RecordFailure(s.peer());
    if (auto dropped = server.log_limiter().Admit("login:" + s.peer())) {
      spdlog::warn("wrong password from {} ({} consecutive failure{}){}", s.peer(), failures,
                   failures == 1 ? "" : "s", LogLimiter::SuppressedNote(*dropped));
    }
    r.ErrorAndClose(replies::kInvalidPassword);
    return false;
  }
  server.login_throttle().RecordSuccess(s.peer());
  return true;
}

// HELLO {"v":2,"hostname":...,"wid":...,"pid":...,"labels":[...],"pwdhash":...}
void CmdHello(Session& s, std::string_view args, Responder r) {
  if (s.identified()) {
    r.Error(replies::kHelloAgain);
    return;
  }
  auto parsed = ParseJson(args, s.server().config().max_json_depth);
  if (!parsed.ok()) {
    // As the reference server: a HELLO that does not parse ends the connection.
    r.ErrorAndClose(parsed.status().message());
    return;
  }
  const json& doc = *parsed;
  if (!doc.is_object()) {
    r.ErrorAndClose("HELLO needs a JSON object");
    return;
  }
  if (auto v = doc.find("v"); v != doc.end() && !v->is_number_integer()) {
    r.ErrorAndClose(replies::kHelloBadVersion);
    return;
  }
  if (s.over_limit()) {
    GuardCounters::Bump(s.server().guards().fwp_max_connections);
    r.ErrorAndClose(std::string(replies::kTooManyConnections) +
                    std::to_string(s.server().config().max_connections));
    return;
  }
  if (!CheckPassword(s, doc, r)) return;
  std::string wid = StringField(doc, "wid");
  if (!wid.empty()) {
    WorkerInfo info;
    info.wid = wid;
    info.hostname = StringField(doc, "hostname");
    if (auto pid = doc.find("pid"); pid != doc.end() && pid->is_number_integer()) {
      info.pid = pid->get<int64_t>();
    }
    if (auto labels = doc.find("labels"); labels != doc.end() && labels->is_array()) {
      for (const auto& l : *labels) {
        if (l.is_string()) info.labels.push_back(l.get<std::string>());
      }
    }
    s.server().engine().workers().Connect(info, s.server().engine().Now());
  }
  s.SetIdentified(wid);
  r.Ok();
}

void CmdPush(Session& s, std::string_view args, Responder r) {
  Engine& engine = s.server().engine();
  auto job =
      ParseJob(args, engine.Now(), s.server().config().max_json_depth, RetryDefaultOf(engine));
  if (!job.ok()) {
    r.Error(job.status().message());
    return;
  }
  engine.Push(std::move(*job), [r](Status st) mutable { Reply(r, st); });
}

void CmdPushBulk(Session& s, std::string_view args, Responder r) {
  Engine& engine = s.server().engine();
  const Config& config = s.server().config();
  auto parsed = ParseJobArray(args, engine.Now(), config.max_json_depth, RetryDefaultOf(engine),
                              config.max_pushb_jobs);
  if (!parsed.ok()) {
    r.Error(parsed.status().message());
    return;
  }
  if (!parsed->is_array) {
    r.Error(replies::kPushbNeedsArray);
    return;
  }
  struct Batch {
    json errors = json::object();
    size_t pending = 0;
    bool sealed = false;
  };
  auto batch = std::make_shared<Batch>();
  auto finish = [batch, r]() mutable {
    if (batch->sealed && batch->pending == 0) r.Bulk(DumpJson(batch->errors));
  };
  for (ArrayJob& element : parsed->jobs) {
    if (!element.job.ok()) {
      batch->errors[element.jid] = element.job.status().message();
      continue;
    }
    batch->pending++;
    engine.Push(std::move(*element.job),
                [batch, jid = std::move(element.jid), finish](Status st) mutable {
                  if (!st.ok()) batch->errors[jid] = st.message();
                  batch->pending--;
                  finish();
                });
  }
  batch->sealed = true;
  finish();
}

void CmdFetch(Session& s, std::string_view args, Responder r) {
  auto queues = SplitWords(args);
  if (queues.empty()) {
    r.Error(replies::kFetchNeedsQueue);
    return;
  }
  // As Faktory: a name that cannot be a queue is skipped (it holds no job); with no valid name
  // left, the FETCH waits its block time and answers null.
  std::erase_if(queues, [](const std::string& q) { return !IsValidQueueName(q); });
  uint64_t ticket = s.server().engine().Fetch(std::move(queues), s.wid(),
                                              [r](Result<std::optional<std::string>> job) mutable {
                                                if (!job.ok()) {
                                                  r.Error(job.status().message());
                                                } else if (job->has_value()) {
                                                  r.Bulk(**job);
                                                } else {
                                                  r.Null();
                                                }
                                              });
  if (ticket != 0) s.SetFetchTicket(ticket);
}

void CmdAck(Session& s, std::string_view args, Responder r) {
  if (auto jid = SimpleJidPayload(args); jid && !jid->empty()) {
    s.server().engine().Ack(std::string(*jid), [r](Status st) mutable { Reply(r, st); });
    return;
  }
  bool ok;
  json doc = ParseOrReply(s, args, r, &ok);
  if (!ok) return;
  auto jid = doc.is_object() ? doc.find("jid") : doc.end();
  if (!doc.is_object() || jid == doc.end() || !jid->is_string()) {
    r.Error(std::string(replies::kInvalidAck) + Quote(args) + replies::kAckNeedsJid);
    return;
  }
  // An empty jid is no job's: +OK, as any unknown jid (and as Faktory).
  s.server().engine().Ack(jid->get<std::string>(), [r](Status st) mutable { Reply(r, st); });
}

void CmdFail(Session& s, std::string_view args, Responder r) {
  bool ok;
  json doc = ParseOrReply(s, args, r, &ok);
  if (!ok) return;
  if (!doc.is_object()) {
    r.Error(std::string(replies::kInvalidFail) + Quote(args) + replies::kFailNeedsObject);
    return;
  }
  std::string jid = StringField(doc, "jid");
  if (jid.empty()) {
    r.Error(replies::kFailMissingJid);
    return;
  }
  // errtype and message are trimmed, defaulted and cut by the retry policy (as Faktory's cleanse).
  FailureReport report;
  report.errtype = StringField(doc, "errtype");
  report.message = StringField(doc, "message");
  if (doc.contains("backtrace") && doc["backtrace"].is_array()) {
    for (const auto& line : doc["backtrace"]) {
      if (report.backtrace.size() >= 50) break;
      if (line.is_string()) report.backtrace.push_back(line.get<std::string>());
    }
  }
  s.server().engine().Fail(jid, std::move(report), [r](Status st) mutable { Reply(r, st); });
}

void CmdBeat(Session& s, std::string_view args, Responder r) {
  bool ok;
  json doc = ParseOrReply(s, args, r, &ok);
  if (!ok) return;
  std::string wid = doc.is_object() ? StringField(doc, "wid") : std::string();
  if (wid.empty()) {
    r.Error(replies::kBeatNeedsWid);
    return;
  }
  int64_t rss = doc.contains("rss_kb") && doc["rss_kb"].is_number_integer()
                    ? doc["rss_kb"].get<int64_t>()
                    : 0;
  auto state = s.server().engine().Beat(wid, StringField(doc, "current_state"), rss);
  if (!state.ok()) {
    r.Error(state.status().message());
  } else if (*state == WorkerState::kRunning) {
    r.Ok();
  } else {
    r.Bulk(DumpJson(json{{"state", WorkerStateName(*state)}}));
  }
}

void CmdInfo(Session& s, std::string_view, Responder r) {
  s.server().Info([r](Result<std::string> info) mutable {
    if (info.ok()) {
      r.Bulk(*info);
    } else {
      r.Error(info.status().message());
    }
  });
}

void CmdFlush(Session& s, std::string_view, Responder r) {
  if (auto dropped = s.server().log_limiter().Admit("flush")) {
    spdlog::warn("FLUSH from connection {} ({}): every job and counter deleted{}", s.id(), s.peer(),
                 LogLimiter::SuppressedNote(*dropped));
  }
  s.server().engine().Flush([r](Status st) mutable { Reply(r, st); });
}

void CmdEnd(Session&, std::string_view, Responder r) { r.CloseQuietly(); }

void CmdMutate(Session& s, std::string_view args, Responder r) {
  bool ok;
  json doc = ParseOrReply(s, args, r, &ok);
  if (!ok) return;
  if (!doc.is_object()) {
    r.Error("MUTATE needs a JSON object with cmd, target and filter");
    return;
  }
  static const std::map<std::string, MutateOp> kOps = {{"clear", MutateOp::kClear},
                                                       {"kill", MutateOp::kKill},
                                                       {"discard", MutateOp::kDiscard},
                                                       {"requeue", MutateOp::kRequeue}};
  static const std::map<std::string, JobState> kTargets = {{"scheduled", JobState::kScheduled},
                                                           {"retries", JobState::kRetry},
                                                           {"dead", JobState::kDead}};
  std::string cmd = StringField(doc, "cmd");
  std::string target = StringField(doc, "target");
  auto op = kOps.find(cmd);
  if (op == kOps.end()) {
    r.Error(std::string(replies::kUnknownMutateOp) + cmd + replies::kMutateOps);
    return;
  }
  auto set = kTargets.find(target);
  if (set == kTargets.end()) {
    r.Error(std::string(replies::kInvalidMutateTarget) + target + replies::kMutateTargets);
    return;
  }
  MutateFilter filter;
  if (doc.contains("filter") && doc["filter"].is_object()) {
    const json& f = doc["filter"];
    filter.jobtype = StringField(f, "jobtype");
    filter.glob = StringField(f, "regexp");
    if (f.contains("jids") && f["jids"].is_array()) {
      for (const auto& j : f["jids"]) {
        if (j.is_string()) filter.jids.insert(j.get<std::string>());
      }
    }
  }
  s.server().engine().Mutate(op->second, set->second, std::move(filter),
                             [r](Status st) mutable { Reply(r, st); });
}

void CmdQueue(Session& s, std::string_view args, Responder r) {
  auto words = SplitWords(args);
  if (words.empty()) {
    r.Error(replies::kQueueNeedsSubcommand);
    return;
  }
  std::string sub = AsciiUpper(words[0]);  // case-insensitive, as Faktory
  std::vector<std::string> names(words.begin() + 1, words.end());
  if (sub != "PAUSE" && sub != "RESUME" && sub != "REMOVE" && sub != "LATENCY") {
    r.Error(std::string(replies::kNoSuchQueueSubcommand) + sub + replies::kQueueSubcommands);
    return;
  }
  if (sub == "LATENCY" && std::ranges::find(names, "*") != names.end()) {
    r.Error(replies::kLatencyWildcard);
    return;
  }
  if (names.empty()) {
    r.Error("QUEUE " + sub + " needs at least one queue name");
    return;
  }
  for (const auto& n : names) {
    if (n != "*" && !IsValidQueueName(n)) {
      r.Error(kBadQueueNameError);
      return;
    }
  }
  Engine& engine = s.server().engine();
  auto done = [r](Status st) mutable { Reply(r, st); };
  if (sub == "PAUSE" || sub == "RESUME") {
    engine.PauseQueues(names, sub == "PAUSE", done);
  } else if (sub == "REMOVE") {
    engine.RemoveQueues(names, done);
  } else {
    engine.QueueLatency(names, [r](Result<std::map<std::string, double>> lat) mutable {
      if (!lat.ok()) {
        r.Error(lat.status().message());
        return;
      }
      json out = json::object();
      for (const auto& [q, secs] : *lat) out[q] = secs;
      r.Bulk(DumpJson(out));
    });
  }
}

}  // namespace

// The Enterprise commands BATCH and TRACK have their own files (batch_commands.h,
// track_commands.h). `enterprise_only` stays for any Enterprise command bulkhead lacks.
constexpr Command kCommands[] = {
    {.verb = "HELLO",
     .handler = CmdHello,
     .needs_identity = false,
     .opens_session = true,
     .may_block = true},
    {.verb = "PUSH", .handler = CmdPush},
    {.verb = "PUSHB", .handler = CmdPushBulk},
    {.verb = "FETCH", .handler = CmdFetch, .may_block = true, .overlaps_itself = true},
    {.verb = "ACK", .handler = CmdAck, .allowed_while_stopping = true},
    {.verb = "FAIL", .handler = CmdFail, .allowed_while_stopping = true},
    {.verb = "BEAT", .handler = CmdBeat},
    {.verb = "INFO", .handler = CmdInfo},
    {.verb = "FLUSH", .handler = CmdFlush},
    {.verb = "END", .handler = CmdEnd, .needs_identity = false, .allowed_while_stopping = true},
    {.verb = "MUTATE", .handler = CmdMutate},
    {.verb = "QUEUE", .handler = CmdQueue},
    {.verb = "BATCH", .handler = CmdBatch},  // batch_commands.h
    {.verb = "TRACK", .handler = CmdTrack},  // track_commands.h
};

std::span<const Command> Commands() { return kCommands; }

const Command* FindCommand(std::string_view verb) {
  for (const Command& c : kCommands) {
    if (c.verb == verb) return &c;
  }
  return nullptr;
}

Admission Admit(const Command* command, std::string_view args, bool identified, bool stopping) {
  if (!identified) {
    // The first line must be HELLO {...} (or END); anything else closes without a reply.
    if (command == nullptr || command->needs_identity ||
        (command->opens_session && !args.starts_with('{'))) {
      return Admission::kCloseQuietly;
    }
  }
  if (stopping && (command == nullptr || !command->allowed_while_stopping)) {
    return Admission::kShuttingDown;
  }
  if (command == nullptr) return Admission::kUnknown;
  if (command->enterprise_only != nullptr) return Admission::kEnterpriseOnly;
  return Admission::kRun;
}

}  // namespace bulkhead
