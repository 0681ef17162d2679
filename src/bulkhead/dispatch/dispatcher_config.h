// DispatcherConfig: the settings of the delivery engine (dispatch/), and the one function that
// derives them from the server's Config. Everything about delivery that the operator configures
// reaches the Dispatcher, its AttemptRunner and its HostCompartments through this struct.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "bulkhead/compartment/host_compartments.h"
#include "bulkhead/config/config.h"
#include "bulkhead/dispatch/delivery_job.h"
#include "bulkhead/dispatch/outcome_record.h"
#include "bulkhead/metrics/top_n_labels.h"
#include "bulkhead/transport/transport.h"

namespace bulkhead {

// Retries for webpush jobs that do not say (Mastodon's `retry: 5`: a push only matters in real
// time), unless the configuration sets [jobtypes.webpush] retry.
inline constexpr int kDefaultWebPushRetry = 5;
// Retries for activitypub jobs that do not say (Mastodon's ActivityPub::DeliveryWorker
// `retry: 16`, about two days of backoff), unless [jobtypes.activitypub] retry is set.
inline constexpr int kDefaultActivityPubRetry = 16;

// Applies the delivery defaults to `config` before the Engine reads it: webpush retry 5 and
// activitypub retry 16 unless configured.
void ApplyDeliveryDefaults(Config& config);

struct DispatcherConfig {
  // Where outcome jobs are pushed.
  std::string outcomes_queue = "bulkhead";
  // The form of their arguments.
  OutcomeArgs outcome_args = OutcomeArgs::kObject;
  DeliveryJobOptions jobs;
  // A Retry-After further ahead than this is cut to it.
  Duration max_retry_after = std::chrono::hours(1);
  // Per-attempt deadlines handed to the transport, by job kind (see DeadlinesFor).
  Deadlines webpush_deadlines;
  Deadlines activitypub_deadlines;
  Deadlines webhook_deadlines;
  // webpush requests may use HTTP/2 where the push service offers it (many streams on one
  // connection); false: HTTP/1.1 (delivery.webpush.http2).
  bool webpush_http2 = true;
  HostCompartmentsConfig compartments;
  // Most delivery jobs held in memory (in flight + parked + waiting); beyond it they stay queued
  // in the store until some finish.
  size_t max_held = 100'000;
  // Bounded per-host metric labels.
  TopNLabelsOptions host_labels;

  // The deadlines of one attempt of a job of `kind`.
  const Deadlines& DeadlinesFor(JobKind kind) const;
};

// The dispatcher settings `config` asks for: outcome queue, private targets, job deadlines,
// per-kind attempt deadlines and the [delivery] compartment settings. `config` must have passed
// Config::Validate.
DispatcherConfig MakeDispatcherConfig(const Config& config);

}  // namespace bulkhead
