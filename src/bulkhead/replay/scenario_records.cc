#include "bulkhead/replay/scenario_records.h"

#include <unistd.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <string_view>
#include <thread>

#include "bulkhead/encoders/vapid.h"
#include "bulkhead/util/base64.h"
#include "bulkhead/util/rng.h"

namespace bulkhead {

void ScenarioRecords::ReadWorkerLines(int fd) {
  std::string buf;
  char chunk[8192];
  for (;;) {
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n <= 0) break;
    buf.append(chunk, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t nl; (nl = buf.find('\n', start)) != std::string::npos; start = nl + 1) {
      std::string_view line(buf.data() + start, nl - start);
      std::lock_guard lock(mu);
      if (line.starts_with("T ")) {
        TimelineRecord r;
        const char* p = line.data() + 2;
        const char* end = line.data() + line.size();
        auto a = std::from_chars(p, end, r.created_us);
        auto b = std::from_chars(a.ptr + 1, end, r.start_us);
        std::from_chars(b.ptr + 1, end, r.end_us);
        timeline.push_back(r);
      } else if (line.starts_with("X ")) {
        ++foreign;
      } else if (line.starts_with("F ")) {
        ++failed;
      }
    }
    buf.erase(0, start);
  }
}

bool ScenarioRecords::Drained(size_t arrived) {
  std::lock_guard lock(mu);
  return timeline.size() >= timeline_created.size() && arrived >= healthy_pushed.size();
}

void ScenarioRecords::Pace(double rate, double duration_s, int64_t t0_us,
                           const std::function<Status(int64_t)>& push_one) {
  const int64_t total = static_cast<int64_t>(std::floor(rate * duration_s));
  for (int64_t i = 0; i < total && !stop_load; ++i) {
    int64_t due = t0_us + static_cast<int64_t>(static_cast<double>(i) * 1e6 / rate);
    int64_t now = SteadyMicros();
    if (due > now) std::this_thread::sleep_for(std::chrono::microseconds(due - now));
    if (Status s = push_one(i); !s.ok()) return SetLoadError(s);
  }
}

void ScenarioRecords::SampleEachSecond(double duration_s, int64_t t0_us,
                                       const std::function<Status()>& sample,
                                       const std::function<void()>& progress) {
  const int64_t end_us = t0_us + static_cast<int64_t>(duration_s * 1e6);
  for (int64_t next = t0_us; SteadyMicros() < end_us && !stop_load; next += 1'000'000) {
    int64_t now = SteadyMicros();
    if (next > now) std::this_thread::sleep_for(std::chrono::microseconds(next - now));
    if (Status s = sample(); !s.ok()) SetLoadError(s);
    progress();
  }
}

void ScenarioRecords::WaitDrained(const PushEndpoint& healthy, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline && !Drained(healthy.Arrivals().size())) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void ScenarioRecords::AddSample(const ServerSample& s) {
  std::lock_guard lock(mu);
  samples.push_back(s);
}

void ScenarioRecords::SetLoadError(const Status& s) {
  std::lock_guard lock(mu);
  if (load_error.ok()) load_error = s;
  stop_load = true;
}

Status ScenarioRecords::LoadError() {
  std::lock_guard lock(mu);
  return load_error;
}

void ScenarioRecords::Progress(std::ostream& err, const std::string& name, double duration_s,
                               size_t arrived, bool final) {
  static const bool tty = isatty(STDERR_FILENO) != 0;
  std::lock_guard lock(mu);
  if (samples.empty()) return;
  const ServerSample& s = samples.back();
  const int second = static_cast<int>(s.t_s);
  if (!tty && (final ? second == last_progress_ : second % 10 != 0)) return;
  last_progress_ = second;
  std::vector<double> lat;
  for (const auto& t : timeline) {
    lat.push_back(static_cast<double>(t.start_us - t.created_us) / 1000.0);
  }
  LatencySummary tl = Summarize(std::move(lat));
  char line[320];
  std::snprintf(line, sizeof line,
                "[%s] %3d/%.0f s  timeline %zu/%lld run, p99 %.1f ms | healthy pushes "
                "%zu arrived %zu | faulty host %s, parked %lld | retry set %lld",
                name.c_str(), second, duration_s, timeline.size(),
                static_cast<long long>(timeline_created.size()), tl.p99_ms, healthy_pushed.size(),
                arrived, s.faulty_breaker.empty() ? "-" : s.faulty_breaker.c_str(),
                static_cast<long long>(s.faulty_parked), static_cast<long long>(s.retry_set));
  if (tty) {
    err << "\r" << line << "\033[K" << (final ? "\n" : "") << std::flush;
  } else {
    err << line << "\n" << std::flush;
  }
}

Result<nlohmann::json> InfoDocument(FaktoryClient& client) {
  auto text = client.Info();
  if (!text.ok()) return text.status();
  auto doc = nlohmann::json::parse(*text, nullptr, false);
  if (!doc.is_object()) return Status::Internal("INFO is not a JSON object");
  return doc;
}

void AddHostFigures(const nlohmann::json& info, const std::string& host, ServerSample& s) {
  if (!info.contains("hosts") || !info["hosts"].is_array()) return;
  for (const auto& h : info["hosts"]) {
    if (h.value("host", "") != host) continue;
    s.faulty_parked += h.value("parked", int64_t{0});
    s.faulty_failures += h.value("failures", int64_t{0});
    if (s.faulty_breaker.empty()) s.faulty_breaker = h.value("breaker", "");
  }
}

Result<std::pair<std::string, std::string>> ReplaySubscriptionKeys() {
  auto key = VapidKey::Generate();
  if (!key.ok()) return key.status();
  return std::make_pair(key->public_key_b64url(), Base64UrlEncode(RandomBytes(16)));
}

void CollectScenario(ScenarioRecords& records, const PushEndpoint& healthy,
                     const PushEndpoint& faulty, ScenarioResult& r) {
  std::map<int64_t, int64_t> arrived;  // seq → first arrival
  for (const auto& a : healthy.Arrivals()) {
    // "/push/<seq>/<pushed_us>"
    int64_t seq = -1;
    if (a.target.starts_with("/push/")) {
      std::from_chars(a.target.data() + 6, a.target.data() + a.target.size(), seq);
    }
    if (seq >= 0) arrived.emplace(seq, a.at_us);
  }
  std::lock_guard lock(records.mu);
  for (const auto& [seq, pushed] : records.healthy_pushed) {
    DeliveryRecord d;
    d.pushed_us = pushed;
    if (auto it = arrived.find(seq); it != arrived.end()) d.arrived_us = it->second;
    r.healthy.push_back(d);
  }
  r.faulty_pushed = records.faulty_pushed;
  r.faulty_requests = static_cast<int64_t>(faulty.Arrivals().size());
  r.timeline_enqueued = static_cast<int64_t>(records.timeline_created.size());
  r.timeline = records.timeline;
  r.foreign_jobs = records.foreign;
  r.samples = records.samples;
  r.end_us = SteadyMicros();
  std::set<int64_t> ran;
  for (const auto& t : records.timeline) ran.insert(t.created_us);
  for (int64_t c : records.timeline_created) {
    if (!ran.count(c)) r.timeline_unrun_created_us.push_back(c);
  }
}

}  // namespace bulkhead
