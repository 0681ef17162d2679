// The [sidekiq] rows of the settings table (settings.h): the Sidekiq bridge.
#include "bulkhead/config/settings.h"

namespace bulkhead {
namespace {

std::string CheckSidekiqRedis(const std::string& value) {
  if (value.empty() || IsRedisStoreUrl(value)) return "";
  return "must be empty (no bridge) or a redis://, rediss:// or redis-sentinel:// URL";
}

// A Sidekiq worker class name: a non-empty Ruby constant path, nothing that needs escaping.
std::string CheckClassName(const std::string& value) {
  if (value.empty() || value.size() > 200) return "must be 1 to 200 characters";
  for (char c : value) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == ':';
    if (!ok) return "may hold only letters, digits, '_' and ':', not \"" + value + "\"";
  }
  return "";
}

}  // namespace

std::string SidekiqQueueNameProblem(const std::string& name) {
  if (name.empty() || name.size() > 100) return "must be 1 to 100 characters";
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.';
    if (!ok) return "may hold only letters, digits, '_', '-' and '.', not \"" + name + "\"";
  }
  return "";
}

std::vector<Setting> SidekiqRows() {
  using S = SidekiqSettings;
  return {
      {.key = "sidekiq.redis",
       .field = MemberField<&Config::sidekiq, &S::redis>(),
       .doc = "the Sidekiq bridge: the application's Sidekiq Redis (its REDIS_URL)",
       .details = "`redis://[:PASSWORD@]HOST:PORT[/DB]`, `rediss://…`, "
                  "`redis-sentinel://HOST:PORT[,…]/MASTER[/DB]`, as `store`; jobs pushed with "
                  "`Sidekiq::Client.push` onto `sidekiq.queues` are taken into bulkhead, outcome "
                  "jobs go to Sidekiq (docs/deliveries.md, \"From Sidekiq\")",
       .check = CheckSidekiqRedis,
       .values = "empty, or a Redis URL",
       .shown_default = "none (no bridge)"},
      {.key = "sidekiq.ca_file",
       .field = MemberField<&Config::sidekiq, &S::ca_file>(),
       .doc = "rediss:// only: CA bundle (PEM) that verifies the application's Redis; empty: the "
              "system's"},
      {.key = "sidekiq.queues",
       .field = MemberField<&Config::sidekiq, &S::queues>(),
       .doc = "the Sidekiq queues bulkhead takes from, first queue first",
       .details = "`webpush`, `activitypub` and `webhook` jobs are run by bulkhead; jobs of any "
                  "other class wait in the bulkhead queue their `queue` names",
       .shown_default = "[\"bulkhead\"]"},
      {.key = "sidekiq.outcomes_queue",
       .field = MemberField<&Config::sidekiq, &S::outcomes_queue>(),
       .doc = "the Sidekiq queue outcome jobs are written to (instead of delivery_outcomes_queue)",
       .check = SidekiqQueueNameProblem,
       .values = "letters, digits, _ - ."},
      {.key = "sidekiq.webpush_gone_class",
       .field = MemberField<&Config::sidekiq, &S::webpush_gone_class>(),
       .doc = "Sidekiq worker class of webpush_gone outcome jobs",
       .check = CheckClassName,
       .values = "a Ruby class name"},
      {.key = "sidekiq.delivery_dead_class",
       .field = MemberField<&Config::sidekiq, &S::delivery_dead_class>(),
       .doc = "Sidekiq worker class of delivery_dead outcome jobs",
       .check = CheckClassName,
       .values = "a Ruby class name"},
      {.key = "sidekiq.host_unavailable_class",
       .field = MemberField<&Config::sidekiq, &S::host_unavailable_class>(),
       .doc = "Sidekiq worker class of host_unavailable outcome jobs",
       .check = CheckClassName,
       .values = "a Ruby class name"},
      {.key = "sidekiq.host_available_class",
       .field = MemberField<&Config::sidekiq, &S::host_available_class>(),
       .doc = "Sidekiq worker class of host_available outcome jobs",
       .check = CheckClassName,
       .values = "a Ruby class name"},
      {.key = "sidekiq.timestamps",
       .field = MemberField<&Config::sidekiq, &S::timestamps>(),
       .doc = "created_at, enqueued_at and failed_at as written: seconds (floats, Sidekiq 6 and 7) "
              "or milliseconds (integers, Sidekiq 8)",
       .details = "jobs taken are read in either form",
       .allowed = {"seconds", "milliseconds"}},
      {.key = "sidekiq.taken_ttl_seconds",
       .field = MemberField<&Config::sidekiq, &S::taken_ttl_seconds>(),
       .doc = "how long bulkhead remembers the jid of a job it took, should a crash leave it to "
              "be taken again",
       .details = "forgotten at once once the job has left the in-progress list; this bounds "
                  "the marks a crash leaves",
       .min = 60,
       .max = 30 * 86400},
      {.key = "sidekiq.batch",
       .field = MemberField<&Config::sidekiq, &S::batch>(),
       .doc = "jobs taken per step while the queues have a backlog",
       .min = 1,
       .max = 10000},
      {.key = "sidekiq.max_job_bytes",
       .field = MemberField<&Config::sidekiq, &S::max_job_bytes>(),
       .doc = "a Sidekiq job longer than this (or than max_line_bytes) is not taken: it goes to "
              "Sidekiq's dead set",
       .min = 1024},
      {.key = "sidekiq.node",
       .field = MemberField<&Config::sidekiq, &S::node>(),
       .doc = "this node's name in the application's Redis (its in-progress list)",
       .details = "empty: the node id on a Redis store, else the host name; two processes on "
                  "embedded stores taking from one Redis need two names",
       .check = [](const std::string& v) { return v.empty() ? "" : SidekiqQueueNameProblem(v); },
       .values = "letters, digits, _ - .",
       .shown_default = "the node id, or the host name"},
      {.key = "sidekiq.dead_max_jobs",
       .field = MemberField<&Config::sidekiq, &S::dead_max_jobs>(),
       .doc = "Sidekiq's dead set is trimmed to this many jobs when the bridge adds one (Sidekiq's "
              "dead_max_jobs)",
       .min = 1},
      {.key = "sidekiq.dead_timeout_days",
       .field = MemberField<&Config::sidekiq, &S::dead_timeout_days>(),
       .doc = "…and to the jobs of the last this many days (Sidekiq's dead_timeout_in_seconds)",
       .min = 1,
       .max = 3650},
  };
}

}  // namespace bulkhead
