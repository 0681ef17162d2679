#include "bulkhead/view/stats_text.h"

#include <fmt/printf.h>

#include "bulkhead/util/json.h"
#include "bulkhead/util/utf8_cut.h"
#include "bulkhead/view/bridge_view.h"
#include "bulkhead/view/cron_view.h"
#include "bulkhead/view/info_json.h"
#include "bulkhead/view/throttle_view.h"

namespace bulkhead {
namespace {

// printf into `out` (the table layout is printf's, as `bulkhead stats` always printed it).
template <typename... Args>
void Appendf(std::string& out, const char* format, const Args&... args) {
  out += fmt::sprintf(format, args...);
}

long long Ll(auto v) { return static_cast<long long>(v); }

// A host's last error on one line: control characters as spaces, at most 60 bytes (CutUtf8);
// "-" when none.
std::string LastErrorCell(const std::string& error) {
  if (error.empty()) return "-";
  std::string cell;
  for (char c : error) cell += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? ' ' : c;
  return CutUtf8(cell, 60);
}

void AppendHosts(std::string& out, const std::vector<HostView>& hosts) {
  if (hosts.empty()) return;
  Appendf(out, "\n%-32s %8s %5s %-10s %8s %8s  %s\n", "HOST", "INFLIGHT", "CAP", "BREAKER",
          "PARKED", "P99(ms)", "LAST ERROR");
  for (const HostView& h : hosts) {
    Appendf(out, "%-32s %8lld %5lld %-10s %8lld %8.0f  %s\n", h.host.c_str(), Ll(h.in_flight),
            Ll(h.cap), h.breaker.c_str(), Ll(h.parked), h.latency_p99_ms,
            LastErrorCell(h.last_error).c_str());
  }
}

// The BATCH table, only once a batch counter is non-zero.
void AppendBatches(std::string& out, const BatchCounts& b) {
  if (b.created == 0 && b.committed == 0 && b.expired == 0 && b.succeeded == 0) return;
  Appendf(out, "\n%-32s %10s\n", "BATCH", "COUNT");
  Appendf(out, "%-32s %10lld\n", "created", Ll(b.created));
  Appendf(out, "%-32s %10lld\n", "committed", Ll(b.committed));
  Appendf(out, "%-32s %10lld\n", "expired", Ll(b.expired));
  Appendf(out, "%-32s %10lld\n", "succeeded", Ll(b.succeeded));
}

}  // namespace

std::string RenderStatsText(const InfoSnapshot& info) {
  const EngineSnapshot& e = info.engine;
  std::string out;
  Appendf(out, "bulkhead %s  store=%s  uptime=%llds  connections=%lld  workers=%lld\n",
          info.server.version.c_str(), e.store.c_str(),
          Ll(std::chrono::duration_cast<std::chrono::seconds>(e.now - e.started_at).count()),
          Ll(info.server.connections), Ll(e.worker_count));
  Appendf(out, "processed %lld  failed %lld  enqueued %lld\n\n", Ll(e.processed), Ll(e.failures),
          Ll(e.enqueued));
  Appendf(out, "%-32s %10s %12s\n", "QUEUE", "SIZE", "LATENCY(s)");
  for (const auto& [name, q] : e.queues) {
    Appendf(out, "%-32s %10lld %12.3f\n", name.c_str(), Ll(q.size), q.latency_seconds);
  }
  Appendf(out, "\n%-32s %10s\n", "SET", "SIZE");
  Appendf(out, "%-32s %10lld\n", "scheduled", Ll(e.scheduled));
  Appendf(out, "%-32s %10lld\n", "retries", Ll(e.retries));
  Appendf(out, "%-32s %10lld\n", "dead", Ll(e.dead));
  Appendf(out, "%-32s %10lld\n", "working", Ll(e.working));
  AppendThrottlesText(out, e.throttles);
  AppendBatches(out, e.batches);
  AppendCronText(out, e.cron);
  if (const std::optional<ClusterView>& d = info.delivery) {
    Appendf(out, "\ndelivery  cluster_nodes=%lld  in_flight=%lld/%lld  host_cap=%lld..%lld\n",
            Ll(d->cluster_nodes), Ll(d->in_flight), Ll(d->max_in_flight), Ll(d->host_cap_min),
            Ll(d->host_cap_max));
  }
  if (info.sidekiq) AppendBridgeText(out, *info.sidekiq);
  if (info.hosts) AppendHosts(out, *info.hosts);
  return out;
}

Result<std::string> StatsTextFromInfo(std::string_view info_text,
                                      const QueueLatencyQuery& latency) {
  auto info = ParseInfoJson(info_text);
  if (!info.ok()) return info.status();
  std::vector<std::string> names;
  for (const auto& [name, q] : info->engine.queues) names.push_back(name);
  if (!names.empty()) {
    auto answer = latency(names);
    auto seconds = answer.ok() ? ParseJson(*answer, kDefaultMaxJsonDepth)
                               : Result<nlohmann::json>(answer.status());
    if (seconds.ok() && seconds->is_object()) {
      for (auto& [name, q] : info->engine.queues) {
        auto it = seconds->find(name);
        if (it != seconds->end() && it->is_number()) q.latency_seconds = it->get<double>();
      }
    }
  }
  return RenderStatsText(*info);
}

}  // namespace bulkhead
