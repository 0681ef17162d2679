// One scenario of `bulkhead replay --pipeline sidekiq` (replay.h): the story's load on a REAL
// Sidekiq process (Debian's ruby-sidekiq, `sidekiq -c CONCURRENCY -q default`, the workers of
// sidekiq/replay_worker.rb) with a real redis-server as the application's Redis. The load pushes,
// as Sidekiq::Client does, Mastodon-shaped FeedInsertWorker jobs (the timeline) and
// Web::PushNotificationWorker jobs, both onto `default`, 30 % of the pushes for the faulty host.
//
//   SidekiqPush::kInline  the 2019 way: the Sidekiq thread makes the push request and waits
//                         (http.rb, app/lib/request.rb's timeouts), failing into Sidekiq's retries.
//   SidekiqPush::kBridge  the Sidekiq job hands the push to bulkhead: Sidekiq::Client pushes a
//                         `webpush` job onto `bulkhead`, which a bulkhead server's Sidekiq bridge
//                         takes ([sidekiq] redis = the same Redis) and delivers.
//
// Timeline latency is enqueue → the start of the FeedInsertWorker job; healthy delivery latency
// enqueue → the request reaching the healthy endpoint. Samples each second: Sidekiq's retry and
// dead sets, the latency of queue `default` (Sidekiq::Queue#latency), failed push attempts (as
// the worker reports them); with the bridge, bulkhead's own retry and dead sets and the faulty
// host's compartment too. Every process is stopped (its process group) on every path.
#pragma once

#include <ostream>
#include <string>

#include "bulkhead/replay/fault.h"
#include "bulkhead/replay/replay.h"
#include "bulkhead/replay/replay_report.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

enum class SidekiqPush { kInline, kBridge };

// The Sidekiq queue the bridge takes `webpush` jobs from in kBridge.
inline constexpr const char* kReplayBridgeQueue = "bulkhead";

// Runs one scenario of options.duration_s (options.pipeline is ignored). Needs redis-server,
// ruby and sidekiq in PATH (scripts/setup installs them); an error names what is missing or what
// failed to start.
Result<ScenarioResult> RunSidekiqScenario(const ReplayOptions& options, Fault fault,
                                          SidekiqPush push, std::ostream& err);

}  // namespace bulkhead
