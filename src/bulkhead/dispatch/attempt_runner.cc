#include "bulkhead/dispatch/attempt_runner.h"

#include <algorithm>

#include "bulkhead/compartment/outcome.h"
#include "bulkhead/compartment/retry_after.h"
#include "bulkhead/dispatch/log_done.h"
#include "bulkhead/metrics/metric_names.h"

namespace bulkhead {
namespace {

namespace mn = metric_names;

// The `outcome` label of bulkhead_deliveries_total for one attempt.
std::string_view OutcomeLabel(const HttpResponse& r) {
  if (r.error != TransportError::kNone) {
    return IsTimeout(r.error) ? mn::kOutcomeTimeout : mn::kOutcomeNetworkError;
  }
  if (r.status >= 200 && r.status < 300) return mn::kOutcomeSuccess;
  if (r.status >= 500) return mn::kOutcomeServerError;
  return mn::kOutcomeClientError;
}

}  // namespace

Status AttemptRunner::Send(const DeliveryJob& job, Transport::DoneCallback done) {
  if (job.extension) {
    // The extension builds the request, possibly later; a failure to build is the attempt's
    // local failure, judged as any other answer.
    ++p_.stats.attempts;
    job.extension->Build(job, [&transport = p_.transport,
                               done = std::move(done)](Result<HttpRequest> request) mutable {
      if (!request.ok()) {
        HttpResponse failed;
        failed.error = TransportError::kOther;
        failed.error_message = std::string(request.status().message());
        done(std::move(failed));
        return;
      }
      transport.Send(std::move(*request), std::move(done));
    });
    return Status::Ok();
  }
  auto request = Build(job);
  if (!request.ok()) return request.status();
  SendBuilt(job, std::move(*request), std::move(done));
  return Status::Ok();
}

Result<HttpRequest> AttemptRunner::Build(const DeliveryJob& job) const {
  return BuildDeliveryRequest(job, p_.signer, p_.keys, p_.clock);
}

void AttemptRunner::SendBuilt(const DeliveryJob& job, HttpRequest request,
                              Transport::DoneCallback done) {
  request.deadlines = p_.config.DeadlinesFor(job.kind);
  request.http2 = job.kind != JobKind::kWebPush || p_.config.webpush_http2;
  ++p_.stats.attempts;
  p_.transport.Send(std::move(request), std::move(done));
}

void AttemptRunner::Refused(const DeliveryJob& job, const Grant& grant, const Status& error,
                            TimePoint now) {
  p_.compartments.OnResult(
      grant, Outcome{OutcomeClass::kPermanent, HostSignal::kNone, std::string(error.message())},
      Duration::zero(), now);
  Dead(job, "InvalidDeliveryJob", std::string(error.message()), 0);
}

void AttemptRunner::Release(const Grant& grant, TimePoint started, TimePoint now) {
  Duration latency = std::max(Duration::zero(), now - started);
  p_.compartments.OnResult(grant, Outcome{OutcomeClass::kRetryable, HostSignal::kNone, "cancelled"},
                           latency, now);
}

void AttemptRunner::Conclude(const DeliveryJob& job, const Grant& grant, TimePoint started,
                             const HttpResponse& response, TimePoint now) {
  Duration latency = std::max(Duration::zero(), now - started);
  std::optional<TimePoint> retry_after;
  if (response.ok()) {
    if (auto value = response.Header("Retry-After")) {
      retry_after = ParseRetryAfter(*value, now, p_.config.max_retry_after);
    }
  }
  Outcome outcome;
  if (job.extension) {
    ExtensionVerdict verdict = job.extension->Judge(job, response, latency, now);
    outcome = std::move(verdict.outcome);
    if (verdict.hold_until && (!retry_after || *retry_after < *verdict.hold_until)) {
      retry_after = std::min(*verdict.hold_until, now + p_.config.max_retry_after);
    }
  } else {
    outcome = Classify(job.kind, AttemptResult{response.error, response.status});
    if (!response.ok() && !response.error_message.empty()) {
      outcome.reason += ": " + response.error_message;
    }
  }
  p_.compartments.OnResult(grant, outcome, latency, now, retry_after);
  CountAttempt(job.host, OutcomeLabel(response), latency);
  p_.host_states.AfterResult(job.host, now);
  Finish(job, outcome, retry_after, now);
}

void AttemptRunner::Finish(const DeliveryJob& job, const Outcome& outcome,
                           std::optional<TimePoint> retry_after, TimePoint now) {
  switch (outcome.cls) {
    case OutcomeClass::kOk:
      ++p_.stats.acked;
      p_.engine.Ack(job.jid, LogDone("ACK", job.jid));
      return;
    case OutcomeClass::kGone: {
      ++p_.stats.gone;
      FailOptions options;
      options.discard = true;
      p_.engine.Fail(job.jid, FailureReport{"SubscriptionGone", outcome.reason, {}},
                     LogDone("FAIL", job.jid), options);
      if (!job.extension) {
        p_.outcomes.WebPushGone(job, outcome.http_status, outcome.reason);
      } else if (!job.extension->OnGone(job, outcome)) {
        p_.outcomes.TokenGone(job, outcome.http_status, outcome.reason);
      }
      return;
    }
    case OutcomeClass::kPermanent:
      Dead(job, "DeliveryRefused", outcome.reason, outcome.http_status);
      return;
    case OutcomeClass::kRetryable:
      break;
  }
  if (now >= job.deadline) {
    ExpireAfter(job, outcome.reason, outcome.http_status);
    return;
  }
  Retry(job, "DeliveryFailed", outcome.reason, outcome.http_status, retry_after);
}

void AttemptRunner::Retry(const DeliveryJob& job, const std::string& errtype,
                          const std::string& reason, int status,
                          std::optional<TimePoint> not_before) {
  bool last = LastAttempt(job);
  FailOptions options;
  options.not_before = not_before;
  p_.engine.Fail(job.jid, FailureReport{errtype, reason, {}}, LogDone("FAIL", job.jid), options);
  if (last) {
    ++p_.stats.dead;
    p_.outcomes.DeliveryDead(job, reason, status);
  } else {
    ++p_.stats.retried;
  }
}

void AttemptRunner::Dead(const DeliveryJob& job, const std::string& errtype,
                         const std::string& reason, int status) {
  ++p_.stats.dead;
  FailOptions options;
  options.dead = true;
  p_.engine.Fail(job.jid, FailureReport{errtype, reason, {}}, LogDone("FAIL", job.jid), options);
  p_.outcomes.DeliveryDead(job, reason, status);
}

void AttemptRunner::Expire(const DeliveryJob& job) {
  // The last failure is the one its payload records (an earlier attempt, on any node).
  ExpireAfter(job, job.last_failure, HttpStatusOfReason(job.last_failure));
}

void AttemptRunner::ExpireAfter(const DeliveryJob& job, const std::string& last_failure,
                                int status) {
  ++p_.stats.expired;
  std::string reason = kHostUnavailableReason;
  if (!last_failure.empty()) reason += " (last: " + last_failure + ")";
  Dead(job, "HostUnavailable", reason, status);
}

void AttemptRunner::ReturnForRetry(const DeliveryJob& job, const std::string& errtype,
                                   const std::string& reason) {
  Retry(job, errtype, reason, 0, std::nullopt);
}

bool AttemptRunner::LastAttempt(const DeliveryJob& job) const {
  // Mirrors RetryPolicy::Decide: this failure's retry_count is the previous one + 1 (0 at first);
  // the job ends when it reaches `retry` — dead, or discarded with retry 0 (Faktory's rule), which
  // ends the delivery all the same, so the app is told either way.
  int retry = job.retry.value_or(p_.engine.config().RetryFor(job.jobtype));
  int count = job.last_retry_count ? *job.last_retry_count + 1 : 0;
  return count >= retry;
}

void AttemptRunner::CountAttemptsIn(CounterFamily* deliveries, HistogramFamily* latency,
                                    TopNLabels* labels) {
  deliveries_ = deliveries;
  latency_ = latency;
  host_labels_ = labels;
}

void AttemptRunner::CountAttempt(const std::string& host, std::string_view outcome,
                                 Duration latency) {
  if (!deliveries_) return;
  std::string label = host_labels_->RecordAndLabel(host);
  deliveries_->WithLabels({label, std::string(outcome)}).Increment();
  latency_->WithLabels({label}).Observe(std::chrono::duration<double>(latency).count());
}

}  // namespace bulkhead
