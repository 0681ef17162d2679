#include "bulkhead/replay/replay_command.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "bulkhead/replay/replay.h"
#include "bulkhead/replay/timeline_worker.h"

namespace bulkhead {
namespace {

struct ReplayFlags {
  ReplayOptions options;
  std::string fault = "blackhole";
  std::string pipeline = "bulkhead";
  std::string rates;
  bool no_progress = false;
};

// Reads the flags that need parsing into the options, then runs the replay; the exit code.
int RunReplayFlags(ReplayFlags& flags) {
  auto fault = ParseFault(flags.fault);
  if (!fault.ok()) {
    std::cerr << "bulkhead replay: --fault: " << fault.status().message() << "\n";
    return 2;
  }
  flags.options.fault = *fault;
  auto pipeline = ParsePipeline(flags.pipeline);
  if (!pipeline.ok()) {
    std::cerr << "bulkhead replay: --pipeline: " << pipeline.status().message() << "\n";
    return 2;
  }
  flags.options.pipeline = *pipeline;
  if (!flags.rates.empty()) {
    auto rates = ParseRates(flags.rates);
    if (!rates.ok()) {
      std::cerr << "bulkhead replay: " << rates.status().message() << "\n";
      return 2;
    }
    flags.options.timeline_per_s = rates->first;
    flags.options.webpush_per_s = rates->second;
  }
  flags.options.progress = !flags.no_progress;
  return RunReplay(flags.options, std::cout, std::cerr);
}

// The replay's timeline worker process (internal, hidden from --help).
void RegisterReplayWorker(CLI::App& app, int* exit_code) {
  auto worker = std::make_shared<TimelineWorkerOptions>();
  auto* w = app.add_subcommand("replay-worker", "The replay's timeline worker process (internal).");
  w->group("");  // hidden from --help
  w->add_option("--port", worker->port, "Faktory port on 127.0.0.1")->required();
  w->add_option("--concurrency", worker->concurrency, "worker threads");
  w->add_option("--queue", worker->queue, "queues to fetch from, in order: QUEUE[,QUEUE...]");
  w->add_flag("--tls", worker->tls, "connect with TLS");
  w->add_option("--ca", worker->ca_file, "CA certificate (PEM) for --tls");
  w->callback([worker, exit_code] {
    if (const char* pw = std::getenv("BULKHEAD_PASSWORD"); pw != nullptr) worker->password = pw;
    *exit_code = RunTimelineWorker(*worker, stdout);
  });
}

}  // namespace

void RegisterReplayCommands(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<ReplayFlags>();
  auto* replay = app.add_subcommand(
      "replay",
      "Replay the incident: a bulkhead server, a healthy and a faulty push host, timeline jobs on "
      "a separate worker process; prints latency, what happened to the faulty host's jobs, "
      "verdicts and a chart. Exit code 1 when a verdict fails.");
  replay->add_option("--fault", flags->fault,
                     "blackhole (default), slow-drip, refuse, reset, 5xx, 429, late");
  replay->add_option("--pipeline", flags->pipeline,
                     "bulkhead (default), or shared-pool: the incumbent's way, the worker threads "
                     "make the push requests and wait (watch the incident happen), or throttled: "
                     "as shared-pool, the pushes in queue `push` throttled to concurrency = 3, "
                     "or sidekiq: a real Sidekiq process, the 2019 way then handed to bulkhead "
                     "through the Sidekiq bridge");
  replay->add_option("--duration", flags->options.duration_s, "seconds of load (default 60)");
  replay->add_option("--rates", flags->rates, "TIMELINE,WEBPUSH jobs per second (default 50,20)");
  replay->add_option("--bad-fraction", flags->options.bad_fraction,
                     "share of Web Push jobs sent to the faulty host (default 0.3)");
  replay->add_flag("--baseline", flags->options.baseline,
                   "first run the same load without the fault, and compare");
  replay->add_option("--concurrency", flags->options.concurrency,
                     "timeline worker threads (default 15)");
  replay->add_option("--out", flags->options.out_dir,
                     "directory for replay.svg, replay.csv, summary.json (default replay-out)");
  replay->add_option("--store", flags->options.store,
                     "the servers' store URL (default: the embedded store in a scratch "
                     "directory); redis://... runs the servers on a fresh namespace there");
  replay->add_option("--nodes", flags->options.nodes,
                     "bulkhead server processes sharing --store (default 1; > 1 needs redis), "
                     "each with a timeline worker; the load spreads over them");
  replay->add_flag("--no-progress", flags->no_progress, "no live progress line");
  replay->add_option("--tls-cert-file", flags->options.tls_cert_file,
                     "serve the replay's Faktory port over TLS with this certificate (PEM); the "
                     "load and the worker connect with tcp+tls://");
  replay->add_option("--tls-key-file", flags->options.tls_key_file, "the certificate's key (PEM)");
  replay->add_option(
      "--ca", flags->options.ca_file,
      "CA certificate (PEM) the clients verify the server with (default: the system's)");
  replay->callback([flags, exit_code] { *exit_code = RunReplayFlags(*flags); });
  RegisterReplayWorker(app, exit_code);
}

}  // namespace bulkhead
