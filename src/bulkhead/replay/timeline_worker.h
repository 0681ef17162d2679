// The replay's worker process: the app's own Sidekiq-style worker, running "timeline" jobs from
// queue `default` with `concurrency` threads, each with its own Faktory connection (one wid, as
// Faktory worker libraries do), plus a heartbeat.
//
// A timeline job is {"jobtype":"timeline","args":[created_us, cpu_us]}: it burns cpu_us of CPU
// (the 1-2 ms of a fan-out) and is ACKed. For each job the worker writes one line to `out`:
//   T <created_us> <start_us> <end_us>
// (steady-clock microseconds; created_us is the load generator's PUSH time). A job of any other
// type is reported as "X <jobtype>" and failed: a delivery job must never reach a worker.
#pragma once

#include <cstdio>
#include <string>

namespace bulkhead {

struct TimelineWorkerOptions {
  std::string host = "127.0.0.1";
  int port = 7419;
  std::string password;
  std::string queue = "default";
  int concurrency = 15;
};

// Runs until the server goes away or asks the worker to terminate. Returns the process exit code
// (0 after a terminate request or the server closing, 1 when it could not connect at all).
int RunTimelineWorker(const TimelineWorkerOptions& options, std::FILE* out);

// Burns `micros` of this thread's CPU time.
void BurnCpu(int64_t micros);

}  // namespace bulkhead
