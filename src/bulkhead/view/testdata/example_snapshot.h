// Test support for view_test (header-only, so it stays out of bulkhead_view): a hand-built
// InfoSnapshot with every field set, its worker, a hand-built DeliverySnapshot, and the reading of
// view/testdata files.
#pragma once

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "bulkhead/dispatch/delivery_snapshot.h"
#include "bulkhead/engine/worker_roster.h"
#include "bulkhead/view/info_snapshot.h"

namespace bulkhead::view_testing {

using namespace std::chrono_literals;

// How old a published snapshot may be before the gauges leave it out, in the gauge tests.
inline constexpr Duration kPublishedMaxAge = 3s;

// Now 2026-01-01T00:01:32.623456Z, up 92 s; two queues, every set, counter and task set, with the
// Scheduled task's wall time 0 (INFO still writes it as a float); one worker (ExampleWorkers); one
// host.
inline InfoSnapshot ExampleSnapshot() {
  InfoSnapshot info;
  EngineSnapshot& e = info.engine;
  e.now = FromUnixMicros(1'767'225'692'623'456);
  e.started_at = e.now - 92s;
  e.store = "sqlite";
  e.queues["critical"] = QueueSnapshot{2, false, 0};
  e.queues["default"] = QueueSnapshot{1, true, 3.25};
  e.scheduled = 1;
  e.retries = 2;
  e.dead = 3;
  e.working = 4;
  e.enqueued = 3;
  e.processed = 10;
  e.failures = 5;
  e.push_duplicates = 6;
  e.tasks.scheduled = TaskSnapshot{1, 0, 0ns};
  e.tasks.retries = TaskSnapshot{2, 1, 1500ms};
  e.tasks.dead = TaskSnapshot{3, 2, 250ms};
  e.tasks.busy = TaskSnapshot{4, 3, 125ms};
  e.tasks.workers = TaskSnapshot{5, 4, 2s};
  e.worker_count = 1;
  info.server.version = "9.9.9";
  info.server.connections = 3;
  info.server.command_count = 42;
  info.server.used_memory_mb = 7;
  HostView h;
  h.host = "a.example";
  h.in_flight = 1;
  h.cap = 4;
  h.breaker = "open";
  h.breaker_openings = 2;
  h.latency_p50_ms = 12.5;
  h.latency_p99_ms = 250;
  h.successes = 9;
  h.failures = 7;
  h.parked = 3;
  h.failing_since = FromUnixMicros(1'767'225'600'000'000);       // 2026-01-01T00:00:00Z
  h.breaker_open_until = FromUnixMicros(1'767'225'720'000'000);  // 2026-01-01T00:02:00Z
  h.last_error = "http 503";
  h.last_error_at = FromUnixMicros(1'767'225'690'000'000);  // 2026-01-01T00:01:30Z
  info.hosts = std::vector<HostView>{h};
  return info;
}

// The one worker of ExampleSnapshot, as the engine's WorkerRoster holds it.
inline std::map<std::string, WorkerInfo> ExampleWorkers() {
  WorkerInfo w;
  w.wid = "w1";
  w.hostname = "box";
  w.pid = 42;
  w.labels = {"a", "b"};
  w.state = WorkerState::kQuiet;
  w.connections = 2;
  w.rss_kb = 1024;
  return {{w.wid, w}};
}

// Two hosts as the dispatcher snapshots them: a.example healthy and busy (its last error an old
// 429), b.example:8443 open, parked, announced unavailable and behind a Retry-After, its last
// error a timeout.
inline DeliverySnapshot TwoHosts() {
  DeliverySnapshot s;
  CompartmentSnapshot a;
  a.host = "a.example";
  a.in_flight = 2;
  a.limit = 4;
  a.latency_p50 = std::chrono::milliseconds(120);
  a.latency_p99 = std::chrono::microseconds(250'500);
  a.successes = 7;
  a.overloaded = 1;
  a.last_error = "http 429";
  a.last_error_at = FromUnixMicros(1'699'999'990'000'000);  // 2023-11-14T22:13:10Z
  CompartmentSnapshot b;
  b.host = "b.example:8443";
  b.limit = 1;
  b.breaker = BreakerState::kOpen;
  b.breaker_openings = 3;
  b.failures = 9;
  b.parked = 5;
  b.unavailable = true;
  b.failing_since = FromUnixMicros(1'700'000'000'000'000);
  b.retry_after_until = FromUnixMicros(1'700'000'120'000'000);
  b.breaker_open_until = FromUnixMicros(1'700'000'060'000'000);  // 2023-11-14T22:14:20Z
  b.last_error = "timeout";
  b.last_error_at = FromUnixMicros(1'700'000'050'000'000);  // 2023-11-14T22:14:10Z
  s.hosts = {a, b};
  s.parked = 5;
  return s;
}

// The text of src/bulkhead/view/testdata/<name> ("" when unreadable).
inline std::string ReadTestdata(const std::string& name) {
  const char* src = std::getenv("BULKHEAD_SOURCE_DIR");
  std::string file = __FILE__;
  std::string dir = src != nullptr ? std::string(src) + "/src/bulkhead/view/testdata"
                                   : file.substr(0, file.find_last_of('/'));
  std::ifstream in(dir + "/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace bulkhead::view_testing
