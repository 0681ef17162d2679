#include "bulkhead/view/info_json.h"

#include "bulkhead/util/json.h"
#include "bulkhead/util/time_format.h"
#include "bulkhead/view/api_json.h"
#include "bulkhead/view/bridge_view.h"
#include "bulkhead/view/cron_view.h"
#include "bulkhead/view/json_read.h"
#include "bulkhead/view/relay_view.h"
#include "bulkhead/view/throttle_view.h"

namespace bulkhead {
namespace {

using nlohmann::json;

// Faktory's figures of a periodic task: {"size", <jobs_key>, "cycles", "wall_time_sec"}, where
// jobs_key is "enqueued" for a set scanner and "reaped" for a reaper.
json TaskJson(const TaskSnapshot& task, size_t size, const char* jobs_key) {
  return {{"size", size},
          {jobs_key, task.jobs},
          {"cycles", task.cycles},
          {"wall_time_sec", std::chrono::duration<double>(task.wall).count()}};
}

// Unique, expiring and cron jobs, only once there is something to show (so that a server that
// does not use them answers Faktory's document unchanged): "unique":{"locks","denied"} and
// "expired":{queue:count}, this node's counts since start.
void AddJobOptionsJson(const EngineSnapshot& e, json& faktory) {
  if (e.unique.taken > 0 || e.unique.denied > 0) {
    faktory["unique"] = {{"locks", e.unique.taken}, {"denied", e.unique.denied}};
  }
  if (!e.jobs_expired.empty()) faktory["expired"] = e.jobs_expired;
  // Cron entries: view/cron_view.h.
  if (!e.cron.empty()) faktory["cron"] = CronJson(e.cron);
}

json FaktoryJson(const EngineSnapshot& e) {
  json queues = json::object();
  for (const auto& [name, q] : e.queues) queues[name] = q.size;
  const EngineTaskSnapshots& t = e.tasks;
  json tasks = {
      {"Scheduled", TaskJson(t.scheduled, e.scheduled, "enqueued")},
      {"Retries", TaskJson(t.retries, e.retries, "enqueued")},
      {"Dead", TaskJson(t.dead, e.dead, "enqueued")},
      {"Busy", TaskJson(t.busy, e.working, "reaped")},
      {"Workers", TaskJson(t.workers, e.worker_count, "reaped")},
      // Faktory Enterprise's batch counters, its names: closed = committed.
      {"batch",
       {{"created", e.batches.created},
        {"closed", e.batches.committed},
        {"expired", e.batches.expired},
        {"successful", e.batches.succeeded}}},
  };
  json out = {{"total_failures", e.failures},
              {"total_processed", e.processed},
              {"total_enqueued", e.enqueued},
              {"total_queues", e.queues.size()},
              {"queues", std::move(queues)},
              {"sets",
               {{"scheduled", e.scheduled},
                {"retries", e.retries},
                {"dead", e.dead},
                {"working", e.working}}},
              {"tasks", std::move(tasks)}};
  AddJobOptionsJson(e, out);
  return out;
}

using namespace json_read;

// One element of "hosts" (an object), as api_json.h HostsJsonValue writes it.
HostView ParseHost(const json& h) {
  HostView v;
  v.host = String(h, "host");
  v.in_flight = Int(h, "in_flight");
  v.cap = Int(h, "cap");
  v.breaker = String(h, "breaker");
  v.breaker_openings = Int(h, "breaker_openings");
  v.latency_p50_ms = Double(h, "latency_p50_ms");
  v.latency_p99_ms = Double(h, "latency_p99_ms");
  v.successes = Int(h, "successes");
  v.failures = Int(h, "failures");
  v.overloaded = Int(h, "overloaded");
  v.parked = Int(h, "parked");
  v.unavailable = Bool(h, "unavailable");
  v.failing_since = ReadTime(h, "failing_since");
  v.retry_after_until = ReadTime(h, "retry_after_until");
  v.breaker_open_until = ReadTime(h, "breaker_open_until");
  if (const json& e = Member(h, "last_error"); e.is_string()) v.last_error = e.get<std::string>();
  v.last_error_at = ReadTime(h, "last_error_at");
  return v;
}

TaskSnapshot ParseTask(const json& tasks, const char* name, const char* jobs_key) {
  const json& t = Member(tasks, name);
  return TaskSnapshot{Int(t, "cycles"), Int(t, jobs_key),
                      std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::duration<double>(Double(t, "wall_time_sec")))};
}

}  // namespace

std::string RenderInfoJson(const InfoSnapshot& info) {
  const EngineSnapshot& e = info.engine;
  std::string utc = FormatRfc3339(e.now);
  json doc = {
      {"now", utc},
      {"server_utc_time", utc.substr(11, 8) + " UTC"},
      {"faktory", FaktoryJson(e)},
      {"server",
       {{"description", "bulkhead"},
        {"faktory_version", "1.10.0"},
        {"bulkhead_version", info.server.version},
        {"store", e.store},
        {"uptime", std::chrono::duration_cast<std::chrono::seconds>(e.now - e.started_at).count()},
        {"connections", info.server.connections},
        {"command_count", info.server.command_count},
        {"workers", e.worker_count},
        {"used_memory_mb", info.server.used_memory_mb}}},
  };
  if (info.hosts) doc["hosts"] = HostsJsonValue(*info.hosts);
  if (info.delivery) doc["delivery"] = ClusterJsonValue(*info.delivery);
  if (info.sidekiq) doc["sidekiq"] = BridgeJsonValue(*info.sidekiq);
  if (info.relay) doc["relay"] = RelayJsonValue(*info.relay);
  if (!e.throttles.empty()) doc["throttles"] = ThrottlesJson(e.throttles);
  return DumpJson(doc);
}

Result<InfoSnapshot> ParseInfoJson(std::string_view text) {
  auto parsed = ParseJson(text, kDefaultMaxJsonDepth);
  if (!parsed.ok() || !parsed->is_object()) {
    return Status::InvalidArgument("INFO reply is not a JSON object");
  }
  const json& doc = *parsed;
  InfoSnapshot out;
  EngineSnapshot& e = out.engine;
  auto now = ParseRfc3339(String(doc, "now"));
  if (now.ok()) e.now = *now;
  const json& server = Member(doc, "server");
  e.started_at = e.now - std::chrono::seconds(Int(server, "uptime"));
  e.store = String(server, "store");
  e.worker_count = static_cast<size_t>(Int(server, "workers"));
  out.server.version = String(server, "bulkhead_version");
  out.server.connections = Int(server, "connections");
  out.server.command_count = Int(server, "command_count");
  out.server.used_memory_mb = Int(server, "used_memory_mb");

  const json& fk = Member(doc, "faktory");
  const json& queues = Member(fk, "queues");
  if (queues.is_object()) {
    for (const auto& [name, size] : queues.items()) {
      e.queues[name].size = size.is_number() ? size.get<size_t>() : 0;
    }
  }
  const json& sets = Member(fk, "sets");
  e.scheduled = static_cast<size_t>(Int(sets, "scheduled"));
  e.retries = static_cast<size_t>(Int(sets, "retries"));
  e.dead = static_cast<size_t>(Int(sets, "dead"));
  e.working = static_cast<size_t>(Int(sets, "working"));
  e.enqueued = static_cast<size_t>(Int(fk, "total_enqueued"));
  e.processed = Int(fk, "total_processed");
  e.failures = Int(fk, "total_failures");
  const json& tasks = Member(fk, "tasks");
  e.tasks = EngineTaskSnapshots{
      ParseTask(tasks, "Scheduled", "enqueued"), ParseTask(tasks, "Retries", "enqueued"),
      ParseTask(tasks, "Dead", "enqueued"), ParseTask(tasks, "Busy", "reaped"),
      ParseTask(tasks, "Workers", "reaped")};
  e.throttles = ParseThrottlesJson(Member(doc, "throttles"));
  const json& batch = Member(tasks, "batch");
  e.batches = BatchCounts{.created = Int(batch, "created"),
                          .committed = Int(batch, "closed"),
                          .expired = Int(batch, "expired"),
                          .succeeded = Int(batch, "successful")};
  e.cron = ParseCronJson(Member(fk, "cron"));
  if (const json& delivery = Member(doc, "delivery"); delivery.is_object()) {
    out.delivery = ParseClusterJson(delivery);
  }
  if (const json& sidekiq = Member(doc, "sidekiq"); sidekiq.is_object()) {
    out.sidekiq = ParseBridgeJson(sidekiq);
  }
  const json& hosts = Member(doc, "hosts");
  if (hosts.is_array()) {
    out.hosts.emplace();
    for (const json& h : hosts) {
      if (h.is_object()) out.hosts->push_back(ParseHost(h));
    }
  }
  return out;
}

}  // namespace bulkhead
