// What every replay scenario records the same way, whichever pipeline runs the jobs: the
// timeline worker's output lines, and the final ScenarioResult built from the pushes made and
// what the push endpoints saw.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "bulkhead/client/faktory_client.h"
#include "bulkhead/replay/push_endpoint.h"
#include "bulkhead/replay/replay_report.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

// What a scenario's load and its worker process(es) record while the load runs. Thread-safe
// through `mu`, which callers also hold to read or change the fields.
struct ScenarioRecords {
  std::mutex mu;
  std::vector<TimelineRecord> timeline;       // the timeline jobs that ran
  std::vector<int64_t> timeline_created;      // every timeline PUSH
  int64_t foreign = 0;                        // delivery jobs that reached the worker
  int64_t failed = 0;                         // job runs the worker reported as failed
  std::vector<ServerSample> samples;          // about one a second while the load runs
  Status load_error;                          // the first error that stopped the load
  std::atomic<bool> stop_load{false};         // set with load_error; read without `mu`
  std::map<int64_t, int64_t> healthy_pushed;  // seq → pushed_us, pushes to the healthy host
  int64_t faulty_pushed = 0;                  // pushes to the faulty host

  // Reads a worker's stdout until EOF: lines "T created_us start_us end_us" (a timeline job ran),
  // "X jobtype" (a job of another type reached it) and "F ..." (a job run failed). Other lines
  // are ignored.
  void ReadWorkerLines(int fd);
  // Whether every timeline job has run and every healthy push of `arrived` has arrived.
  bool Drained(size_t arrived);
  // Calls `push_one(i)` for i = 0 .. floor(rate * duration_s) - 1, job i when t0_us + i / rate
  // has come (steady clock), until the first error (kept, SetLoadError) or until stop_load.
  void Pace(double rate, double duration_s, int64_t t0_us,
            const std::function<Status(int64_t)>& push_one);
  // Calls `sample()` (an error stops the load) then `progress()` once a second from t0_us for
  // duration_s, or until stop_load.
  void SampleEachSecond(double duration_s, int64_t t0_us, const std::function<Status()>& sample,
                        const std::function<void()>& progress);
  // Waits until Drained(healthy.Arrivals().size()), at most `timeout`.
  void WaitDrained(const PushEndpoint& healthy, std::chrono::milliseconds timeout);
  void AddSample(const ServerSample& s);
  // Keeps the first error and stops the load.
  void SetLoadError(const Status& s);
  Status LoadError();
  // Writes the live progress line of scenario `name` at the last sample, `arrived` healthy
  // pushes in, to `err`: on a terminal rewriting one line, otherwise one line every 10 s (and the
  // final one). One caller thread.
  void Progress(std::ostream& err, const std::string& name, double duration_s, size_t arrived,
                bool final);

 private:
  int last_progress_ = -1;  // the second of the last progress line written
};

// INFO of the server `client` is connected to, as a JSON object.
Result<nlohmann::json> InfoDocument(FaktoryClient& client);

// Adds the figures of `host` ("127.0.0.1:PORT") in one bulkhead node's INFO "hosts" to `s`:
// parked jobs, failures, and the breaker state when `s` has none yet.
void AddHostFigures(const nlohmann::json& info, const std::string& host, ServerSample& s);

// A W3C PushSubscription's keys (p256dh, auth), base64url: a fresh P-256 public key and a 16-byte
// auth secret. The replay's endpoints do not decrypt, but bulkhead encrypts every message exactly
// as for a browser.
Result<std::pair<std::string, std::string>> ReplaySubscriptionKeys();

// Fills `r`'s timeline, healthy deliveries (matched by the "/push/<seq>/..." request target) and
// faulty-host counters from `records` and the endpoints; end_us is now.
void CollectScenario(ScenarioRecords& records, const PushEndpoint& healthy,
                     const PushEndpoint& faulty, ScenarioResult& r);

}  // namespace bulkhead
