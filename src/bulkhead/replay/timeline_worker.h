// The replay's worker process: the app's own Sidekiq-style worker, running "timeline" jobs from
// queue `default` with `concurrency` threads, each with its own Faktory connection (one wid, as
// Faktory worker libraries do), plus a heartbeat.
//
// A timeline job is {"jobtype":"timeline","args":[created_us, cpu_us]}: it burns cpu_us of CPU
// (the 1-2 ms of a fan-out) and is ACKed. For each job the worker writes one line to `out`:
//   T <created_us> <start_us> <end_us>
// (steady-clock microseconds; created_us is the load generator's PUSH time).
//
// A "push_notification" job ({"args":[{"endpoint":URL,"payload":TEXT}]}) is the incumbent's way
// of delivering (the replay's --pipeline shared-pool): the worker thread POSTs the payload itself
// and waits, with Mastodon's HTTP timeouts (connect 5 s, 10 s without a byte, 30 s for the
// response), then ACKs on 2xx and FAILs otherwise (the server retries it like Sidekiq).
// A job of any other type is reported as "X <jobtype>" and failed: bulkhead's own delivery jobs
// must never reach a worker.
#pragma once

#include <cstdio>
#include <string>

#include "bulkhead/util/status.h"

namespace bulkhead {

struct TimelineWorkerOptions {
  std::string host = "127.0.0.1";
  int port = 7419;
  std::string password;
  std::string queue = "default";  // or "Q1,Q2,...": FETCH lists them in this order
  bool tls = false;               // tcp+tls://, verified against ca_file (empty: the system's CAs)
  std::string ca_file;
  int concurrency = 15;
};

// Runs until the server goes away or asks the worker to terminate. Returns the process exit code
// (0 after a terminate request or the server closing, 1 when it could not connect at all).
int RunTimelineWorker(const TimelineWorkerOptions& options, std::FILE* out);

// POSTs `body` to `url` and waits for the answer, as a Sidekiq worker thread does. OK on 2xx;
// Unavailable naming the HTTP status or the transport error otherwise.
Status BlockingPost(const std::string& url, const std::string& body);

// Burns `micros` of this thread's CPU time.
void BurnCpu(int64_t micros);

}  // namespace bulkhead
