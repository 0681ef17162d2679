// The incident as a benchmark (`bulkhead replay`): on loopback, a bulkhead server on its embedded
// store (a child process; or `nodes` servers sharing a Redis store, `--store`, `--nodes`), a
// healthy push endpoint and a faulty one, a load generator, and a separate worker process running
// "timeline" jobs over the Faktory protocol. The story's load by default: 50 timeline jobs/s (1-2
// ms of CPU each, queue `default`), 20 Web Push jobs/s pushed to the same queue, 30% of them to a
// host that accepts and never answers, for 60 s, worker concurrency 15.
//
// Output: a live progress line on stderr; then, on `out`, a table (timeline latency, healthy
// deliveries, what happened to the faulty host's jobs, retry-set size), verdict lines, and the
// files replay.svg (the chart), replay.csv (per second) and summary.json in out_dir.
//
// With Pipeline::kSharedPool the same load is delivered the incumbent's way, to watch the incident
// itself happen: the worker's threads make the push requests and wait on the faulty host. With
// Pipeline::kThrottled they still do, but the push jobs go to their own queue `push`,
// throttled to kThrottledPushConcurrency, and the worker fetches `default, push`: a queue
// throttle as the generic bulkhead around the app's own jobs.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <utility>

#include "bulkhead/replay/fault.h"
#include "bulkhead/replay/replay_report.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

// Who makes the push requests.
enum class Pipeline {
  kBulkhead,    // bulkhead's built-in webpush jobs: per-host compartments, no worker thread waits
  kSharedPool,  // the incumbent's way (Mastodon on Sidekiq): the app's worker threads make the
                // request themselves and wait, sharing the pool with the timeline jobs
  kThrottled,   // as kSharedPool, with the push jobs in queue `push` under a queue throttle
  kSidekiq,     // a real Sidekiq process and redis-server, run twice: the pushes made by the
                // Sidekiq threads (2019), then handed to bulkhead through its Sidekiq bridge
                // (sidekiq_scenario.h)
};
// Pipeline::kSidekiq: the timeline p99 bound of its verdicts. Sidekiq is Ruby, one process under
// a global interpreter lock, fetching with BRPOP: its healthy queue latency is milliseconds, and
// the bound is the "well under a second" a Mastodon user notices, not bulkhead's own 50 ms.
inline constexpr double kSidekiqTimelineP99Ms = 1000;
// Pipeline::kThrottled: the throttle of queue `push` ([throttles] push = { concurrency = 3,
// timeout = 60 }): at most 3 of the worker's threads ever wait on a push request.
inline constexpr int kThrottledPushConcurrency = 3;
inline constexpr int kThrottledPushTimeoutSeconds = 60;
// "bulkhead", "shared-pool", "throttled" or "sidekiq"; InvalidArgument otherwise.
Result<Pipeline> ParsePipeline(std::string_view name);

struct ReplayOptions {
  Fault fault = Fault::kBlackhole;
  Pipeline pipeline = Pipeline::kBulkhead;
  double duration_s = 60;
  double timeline_per_s = 50;
  double webpush_per_s = 20;
  double bad_fraction = 0.3;  // share of Web Push jobs addressed to the faulty host
  bool baseline = false;      // first run the same load with a healthy second host
  int concurrency = 15;       // timeline worker threads
  std::string out_dir = "replay-out";
  // TLS: the replay's server serves this certificate and every client (load, worker) connects
  // with tcp+tls://, verifying it against ca_file (empty: the system's CAs). Both files or none.
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string ca_file;
  // The store the server(s) run on (`serve --store`); empty: the embedded store in a scratch
  // directory. With a Redis URL every scenario uses a fresh namespace ("replay-XXXXXX").
  std::string store;
  // Server processes on that store (> 1 needs a Redis URL), each with its own timeline worker
  // process (the `concurrency` threads split between them); the load generator pushes job i
  // through node i % nodes, and the figures are the cluster's.
  int nodes = 1;
  bool progress = true;  // the live line on stderr
  ReplayThresholds thresholds;
};

// Parses "--rates TIMELINE,WEBPUSH" (jobs per second, e.g. "50,20"). InvalidArgument names the
// problem.
Result<std::pair<double, double>> ParseRates(std::string_view text);
// Range checks of the options; InvalidArgument names the option.
Status ValidateReplayOptions(const ReplayOptions& options);

// Runs the replay. Returns the process exit code: 0 when every verdict passes, 1 when one fails,
// 2 when the replay could not run (the error is written to `err`). With Pipeline::kSidekiq, 0
// when the bridged run passes every verdict and the 2019 run fails its timeline p99 verdict (the
// incident reproduced); the files of each run go to out_dir/sidekiq-2019 and
// out_dir/sidekiq-bulkhead.
int RunReplay(const ReplayOptions& options, std::ostream& out, std::ostream& err);

}  // namespace bulkhead
