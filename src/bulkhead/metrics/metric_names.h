// The names, label names and help texts of every metric bulkhead exposes, in one place. The
// server registers its metrics with these constants; docs/operations.md and the shipped rules in
// deploy/prometheus/ use the same names, so a rename here must be repeated there.
//
// Conventions (Prometheus naming practice): `bulkhead_` namespace, base units (seconds), counters
// end in `_total`. Every per-queue series carries label `queue`, every per-remote-host series
// label `host` (folded to at most N values plus "other" by TopNLabels).
#pragma once

#include <string_view>

namespace bulkhead::metric_names {

// ---- Label names -------------------------------------------------------------------------------
inline constexpr std::string_view kLabelQueue = "queue";
inline constexpr std::string_view kLabelHost = "host";
inline constexpr std::string_view kLabelOutcome = "outcome";
inline constexpr std::string_view kLabelJobType = "jobtype";
inline constexpr std::string_view kLabelVersion = "version";
inline constexpr std::string_view kLabelMetric = "metric";
// On a store several nodes share: the node a per-node figure is from (node_metrics.h).
inline constexpr std::string_view kLabelNode = "node";

// Values of `outcome` on bulkhead_deliveries_total.
inline constexpr std::string_view kOutcomeSuccess = "success";             // 2xx
inline constexpr std::string_view kOutcomeClientError = "client_error";    // 4xx, not retried
inline constexpr std::string_view kOutcomeServerError = "server_error";    // 5xx, retried
inline constexpr std::string_view kOutcomeTimeout = "timeout";             // connect/read deadline
inline constexpr std::string_view kOutcomeNetworkError = "network_error";  // DNS, refused, TLS
inline constexpr std::string_view kOutcomeRejected = "rejected";  // breaker open or host cap full

// ---- Queues and job sets (gauges computed at scrape time) ---------------------------------------
// Jobs waiting in the queue. Label: queue.
inline constexpr std::string_view kQueueSize = "bulkhead_queue_size";
inline constexpr std::string_view kQueueSizeHelp = "Jobs waiting in the queue.";
// Age of the oldest waiting job, computed when scraped (0 for an empty queue). Label: queue.
// Never updated by workers, so it keeps climbing while every worker is stuck.
inline constexpr std::string_view kQueueLatencySeconds = "bulkhead_queue_latency_seconds";
inline constexpr std::string_view kQueueLatencySecondsHelp =
    "Age of the oldest job waiting in the queue, computed at scrape time (0 when empty).";
inline constexpr std::string_view kRetrySetSize = "bulkhead_retry_set_size";
inline constexpr std::string_view kRetrySetSizeHelp = "Jobs waiting in the retry set.";
inline constexpr std::string_view kScheduledSetSize = "bulkhead_scheduled_set_size";
inline constexpr std::string_view kScheduledSetSizeHelp = "Jobs waiting in the scheduled set.";
inline constexpr std::string_view kDeadSetSize = "bulkhead_dead_set_size";
inline constexpr std::string_view kDeadSetSizeHelp = "Jobs in the dead set (retries exhausted).";
inline constexpr std::string_view kParkedJobs = "bulkhead_parked_jobs";
inline constexpr std::string_view kParkedJobsHelp =
    "Delivery jobs parked because their host's breaker is open or its cap is full.";
// Cluster-wide delivery caps: this node's view of the cluster and its share of the caps.
inline constexpr std::string_view kClusterNodes = "bulkhead_cluster_nodes";
inline constexpr std::string_view kClusterNodesHelp =
    "Live nodes sharing the store, as this node last learned (1 on an embedded store).";
inline constexpr std::string_view kDeliveryMaxInflight = "bulkhead_delivery_max_inflight";
inline constexpr std::string_view kDeliveryMaxInflightHelp =
    "This node's global cap on deliveries in flight: global_max_in_flight / cluster nodes.";
inline constexpr std::string_view kDeliveryHostCapMax = "bulkhead_delivery_host_cap_max";
inline constexpr std::string_view kDeliveryHostCapMaxHelp =
    "This node's ceiling of every host's adaptive cap: host_cap_max / cluster nodes.";

// ---- Queue throttles ([throttles])
// -----------------------------------------------------
inline constexpr std::string_view kThrottleLimit = "bulkhead_throttle_limit";
inline constexpr std::string_view kThrottleLimitHelp =
    "A throttled queue's limit: jobs reserved at once (concurrency), or per worker (worker).";
inline constexpr std::string_view kThrottleInUse = "bulkhead_throttle_in_use";
inline constexpr std::string_view kThrottleInUseHelp =
    "Slots of a throttled queue held now, by all workers.";
inline constexpr std::string_view kThrottleWorkerMaxInUse = "bulkhead_throttle_worker_max_in_use";
inline constexpr std::string_view kThrottleWorkerMaxInUseHelp =
    "Per-worker throttles: the most slots of the queue one worker holds now.";

// ---- Workers and jobs ---------------------------------------------------------------------------
inline constexpr std::string_view kWorkingJobs = "bulkhead_working_jobs";
inline constexpr std::string_view kWorkingJobsHelp = "Jobs fetched by a worker and not yet acked.";
// Age of the longest-running fetched job, computed at scrape time (0 when none): the hung-worker
// detector that pairs with queue latency.
inline constexpr std::string_view kOldestWorkingJobSeconds = "bulkhead_oldest_working_job_seconds";
inline constexpr std::string_view kOldestWorkingJobSecondsHelp =
    "Time since the longest-running unacked job was fetched, computed at scrape time.";
inline constexpr std::string_view kWorkersConnected = "bulkhead_workers_connected";
inline constexpr std::string_view kWorkersConnectedHelp = "Worker processes with a live heartbeat.";
inline constexpr std::string_view kJobsProcessedTotal = "bulkhead_jobs_processed_total";
inline constexpr std::string_view kJobsProcessedTotalHelp =
    "Jobs finished, acked or failed (Faktory's processed count, kept across restarts).";
inline constexpr std::string_view kJobsFailedTotal = "bulkhead_jobs_failed_total";
inline constexpr std::string_view kJobsFailedTotalHelp =
    "Jobs failed (FAIL or reservation expiry).";
// PUSH is idempotent: a job whose jid the server already holds is answered OK and changes nothing.
inline constexpr std::string_view kPushDuplicatesTotal = "bulkhead_push_duplicates_total";
inline constexpr std::string_view kPushDuplicatesTotalHelp =
    "PUSHed jobs (PUSH or PUSHB) whose jid the server already held: answered OK, nothing changed.";
// ---- Unique, expiring and cron jobs; this node's counts since start ----------------------
inline constexpr std::string_view kUniqueLocksTotal = "bulkhead_unique_locks_total";
inline constexpr std::string_view kUniqueLocksTotalHelp =
    "Unique-job locks taken with a PUSH (Faktory's uniq.lock).";
inline constexpr std::string_view kUniqueDeniedTotal = "bulkhead_unique_denied_total";
inline constexpr std::string_view kUniqueDeniedTotalHelp =
    "PUSHes refused NOTUNIQUE: another job held the lock (Faktory's uniq.denied).";
// Label: queue.
inline constexpr std::string_view kJobsExpiredTotal = "bulkhead_jobs_expired_total";
inline constexpr std::string_view kJobsExpiredTotalHelp =
    "Jobs dropped at FETCH because their custom.expires_at had passed (Faktory's jobs.expired).";
// Label: entry (the cron entry's name).
inline constexpr std::string_view kLabelEntry = "entry";
inline constexpr std::string_view kCronEnqueuedTotal = "bulkhead_cron_enqueued_total";
inline constexpr std::string_view kCronEnqueuedTotalHelp =
    "Jobs a cron entry pushed through this node (each due time is claimed by one node).";
inline constexpr std::string_view kCronLostTotal = "bulkhead_cron_lost_total";
inline constexpr std::string_view kCronLostTotalHelp =
    "Cron firings claimed by this node whose PUSH was refused (NOTUNIQUE or a store error).";
inline constexpr std::string_view kCronNextRunSeconds = "bulkhead_cron_next_run_timestamp_seconds";
inline constexpr std::string_view kCronNextRunSecondsHelp =
    "When a cron entry is next due (Unix seconds).";

// Batches. Label: event (created, committed, expired: uncommitted for 30 minutes,
// succeeded: the success callback finished, or all members succeeded when there is none).
inline constexpr std::string_view kBatchesTotal = "bulkhead_batches_total";
inline constexpr std::string_view kBatchesTotalHelp =
    "Batches by event: created, committed, expired (uncommitted for 30 minutes), succeeded.";
inline constexpr std::string_view kLabelEvent = "event";
// Histogram. Label: jobtype. Buckets: kJobRuntimeBuckets.
inline constexpr std::string_view kJobRuntimeSeconds = "bulkhead_job_runtime_seconds";
inline constexpr std::string_view kJobRuntimeSecondsHelp = "Time from FETCH to ACK or FAIL.";

// ---- Protections against hostile or broken clients ---------------------------------------------
inline constexpr std::string_view kLoginFailuresTotal = "bulkhead_login_failures_total";
inline constexpr std::string_view kLoginFailuresTotalHelp = "HELLOs with a wrong password.";
inline constexpr std::string_view kLoginsThrottledTotal = "bulkhead_logins_throttled_total";
inline constexpr std::string_view kLoginsThrottledTotalHelp =
    "HELLOs refused unchecked because their address failed too often just before.";
// Labels: listener (faktory, http), reason (fd_limit, max_connections, unsent_replies, evicted).
inline constexpr std::string_view kConnectionsShedTotal = "bulkhead_connections_shed_total";
inline constexpr std::string_view kConnectionsShedTotalHelp =
    "Connections refused or closed by a limit, by listener and reason.";
inline constexpr std::string_view kLabelListener = "listener";
// Label: listener. A client that is not TLS on a TLS port, a handshake that does not finish.
inline constexpr std::string_view kTlsHandshakeFailuresTotal =
    "bulkhead_tls_handshake_failures_total";
inline constexpr std::string_view kTlsHandshakeFailuresTotalHelp =
    "TLS handshakes that failed or did not finish in time, by listener.";
inline constexpr std::string_view kLabelReason = "reason";

// ---- Outbound delivery, per remote host ---------------------------------------------------------
inline constexpr std::string_view kHostInflight = "bulkhead_host_inflight";
inline constexpr std::string_view kHostInflightHelp = "Deliveries in flight to the host.";
inline constexpr std::string_view kHostCap = "bulkhead_host_cap";
inline constexpr std::string_view kHostCapHelp = "Concurrency cap (bulkhead) for the host.";
// 1 while the host's breaker is not closed (open or half-open), else 0. For host="other" the
// value is the number of folded hosts whose breaker is not closed.
inline constexpr std::string_view kHostBreakerOpen = "bulkhead_host_breaker_open";
inline constexpr std::string_view kHostBreakerOpenHelp =
    "1 while the host's circuit breaker is open or half-open (for host=\"other\": how many).";
inline constexpr std::string_view kDeliveriesTotal = "bulkhead_deliveries_total";
inline constexpr std::string_view kDeliveriesTotalHelp = "Delivery attempts by host and outcome.";
// Histogram. Label: host. Buckets: kDeliveryLatencyBuckets.
inline constexpr std::string_view kDeliveryLatencySeconds = "bulkhead_delivery_latency_seconds";
inline constexpr std::string_view kDeliveryLatencySecondsHelp =
    "Duration of one delivery attempt (request sent to response or error).";

// ---- Process ------------------------------------------------------------------------------------
// 1 while the store is degraded (a commit failed: every change is refused until a restart), else 0.
inline constexpr std::string_view kStoreDegraded = "bulkhead_store_degraded";
inline constexpr std::string_view kStoreDegradedHelp =
    "1 when a store commit failed and every change is refused until a restart, else 0.";
// 0 while a networked store cannot be reached (Redis down: every call answers "store
// unavailable"; the node reconnects by itself), else 1. Read from the store, not a snapshot.
inline constexpr std::string_view kStoreUp = "bulkhead_store_up";
inline constexpr std::string_view kStoreUpHelp =
    "0 while the store cannot be reached (every call answers store unavailable), else 1.";
// ---- The Sidekiq bridge (bridge/sidekiq_bridge.h; present only while it is on) ----------------
// 1 while the application's Redis answers and this node holds its name there, else 0.
inline constexpr std::string_view kSidekiqBridgeUp = "bulkhead_sidekiq_bridge_up";
inline constexpr std::string_view kSidekiqBridgeUpHelp =
    "1 while the Sidekiq bridge can reach the application's Redis and holds its node name there.";
// Jobs taken from Sidekiq queues into bulkhead's store (new ones; repeats apart).
inline constexpr std::string_view kSidekiqTakenTotal = "bulkhead_sidekiq_taken_total";
inline constexpr std::string_view kSidekiqTakenTotalHelp =
    "Jobs taken from the Sidekiq queues into bulkhead's store.";
inline constexpr std::string_view kSidekiqRepeatsTotal = "bulkhead_sidekiq_repeats_total";
inline constexpr std::string_view kSidekiqRepeatsTotalHelp =
    "Jobs taken again (after a crash or a lost reply) and recognised as already taken.";
inline constexpr std::string_view kSidekiqDeadTotal = "bulkhead_sidekiq_dead_total";
inline constexpr std::string_view kSidekiqDeadTotalHelp =
    "Jobs that could not be taken (bad JSON, invalid arguments, too long) and went to Sidekiq's "
    "dead set.";
inline constexpr std::string_view kSidekiqReapedTotal = "bulkhead_sidekiq_reaped_total";
inline constexpr std::string_view kSidekiqReapedTotalHelp =
    "Jobs taken back from the in-progress lists of dead nodes.";
inline constexpr std::string_view kSidekiqOutcomesWrittenTotal =
    "bulkhead_sidekiq_outcomes_written_total";
inline constexpr std::string_view kSidekiqOutcomesWrittenTotalHelp =
    "Outcome jobs written to the Sidekiq outcomes queue.";
inline constexpr std::string_view kSidekiqInProgress = "bulkhead_sidekiq_in_progress";
inline constexpr std::string_view kSidekiqInProgressHelp =
    "Jobs in this node's in-progress list: taken from Sidekiq, not yet settled.";
// Label: queue (a taken Sidekiq queue).
inline constexpr std::string_view kSidekiqQueueSize = "bulkhead_sidekiq_queue_size";
inline constexpr std::string_view kSidekiqQueueSizeHelp =
    "Jobs waiting in the Sidekiq queue (LLEN queue:NAME), as last read.";
inline constexpr std::string_view kSidekiqQueueLatencySeconds =
    "bulkhead_sidekiq_queue_latency_seconds";
inline constexpr std::string_view kSidekiqQueueLatencySecondsHelp =
    "Sidekiq's latency of the queue: now minus the enqueued_at of its oldest job (0 when empty).";

// Always 1; label version. Its presence proves /metrics answers with bulkhead's own figures.
inline constexpr std::string_view kBuildInfo = "bulkhead_build_info";
inline constexpr std::string_view kBuildInfoHelp = "Always 1; labelled with the bulkhead version.";
inline constexpr std::string_view kStartTimeSeconds = "bulkhead_start_time_seconds";
inline constexpr std::string_view kStartTimeSecondsHelp = "Unix time the server started.";
// Registered by Registry itself: a scrape-time callback failed, so its family was left out of the
// scrape instead of showing a frozen value. Label: metric.
inline constexpr std::string_view kMetricsCollectErrorsTotal =
    "bulkhead_metrics_collect_errors_total";
inline constexpr std::string_view kMetricsCollectErrorsTotalHelp =
    "Scrape-time metric callbacks that failed; the family was omitted from that scrape.";

// Registered by StatsdEmitter: datagrams sent, and dropped because they could not be sent at once.
inline constexpr std::string_view kStatsdDatagramsSentTotal =
    "bulkhead_statsd_datagrams_sent_total";
inline constexpr std::string_view kStatsdDatagramsSentTotalHelp = "StatsD datagrams sent.";
inline constexpr std::string_view kStatsdDatagramsDroppedTotal =
    "bulkhead_statsd_datagrams_dropped_total";
inline constexpr std::string_view kStatsdDatagramsDroppedTotalHelp =
    "StatsD datagrams dropped because the non-blocking send failed.";

// ---- Histogram buckets (seconds) ----------------------------------------------------------------
// Jobs run from milliseconds to the Faktory default reservation of 30 min.
inline constexpr double kJobRuntimeBuckets[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
                                                2.5,   5,    10,    30,   60,  120,  300, 1800};
// One HTTP delivery: bounded by the delivery deadline (tens of seconds).
inline constexpr double kDeliveryLatencyBuckets[] = {0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                                     1,    2.5,   5,    10,  20,   30};

// The push relay (docs/relay.md). Label app: the [[relay.apns]] / [[relay.fcm]] name.
// Counter. Labels: app, event (accepted, forwarded, retried, dead, gone, unsubscribe).
inline constexpr std::string_view kRelayMessagesTotal = "bulkhead_relay_messages_total";
inline constexpr std::string_view kRelayMessagesTotalHelp =
    "Relay messages by app and what became of them: accepted (stored, 201), forwarded (APNs or "
    "FCM took it), retried, dead, gone (token unregistered), unsubscribe (Unsubscribe-URL "
    "DELETE started).";
// Counter. Labels: app, status (400, 404, 405, 413, 415, 429, 503).
inline constexpr std::string_view kRelayRefusedTotal = "bulkhead_relay_refused_total";
inline constexpr std::string_view kRelayRefusedTotalHelp =
    "Relay requests refused, by app and the HTTP status answered to the sender.";
// Counter. Labels: app, reason (APNs reason or FCM errorCode, or the transport's error word).
inline constexpr std::string_view kRelayReasonsTotal = "bulkhead_relay_reasons_total";
inline constexpr std::string_view kRelayReasonsTotalHelp =
    "Failed forward attempts by app and the reason APNs or FCM gave.";
// Histogram. Label: app. Buckets: kDeliveryLatencyBuckets.
inline constexpr std::string_view kRelayForwardLatencySeconds =
    "bulkhead_relay_forward_latency_seconds";
inline constexpr std::string_view kRelayForwardLatencySecondsHelp =
    "Duration of one forward attempt to APNs or FCM (request sent to answer).";
// Gauge. Labels: app, reason. 1 while the app's compartment is stopped because APNs or FCM
// refused its credentials (403 InvalidProviderToken, ...).
inline constexpr std::string_view kRelayAppStopped = "bulkhead_relay_app_stopped";
inline constexpr std::string_view kRelayAppStoppedHelp =
    "1 while the relay app is stopped: APNs or FCM refused its credentials (reason says why).";

}  // namespace bulkhead::metric_names
