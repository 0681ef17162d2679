#include "bulkhead/relay/relay_figures.h"

#include "bulkhead/metrics/metric_names.h"

namespace bulkhead {
namespace {

namespace mn = metric_names;

const char* EventName(RelayEvent e) {
  switch (e) {
    case RelayEvent::kForwarded:
      return "forwarded";
    case RelayEvent::kRetried:
      return "retried";
    case RelayEvent::kDead:
      return "dead";
    case RelayEvent::kGone:
      return "gone";
  }
  return "other";
}

}  // namespace

Status RelayCounters::RegisterMetrics(Registry& registry) {
  auto messages =
      registry.AddCounter(mn::kRelayMessagesTotal, mn::kRelayMessagesTotalHelp, {"app", "event"});
  if (!messages.ok()) return messages.status();
  auto refused =
      registry.AddCounter(mn::kRelayRefusedTotal, mn::kRelayRefusedTotalHelp, {"app", "status"});
  if (!refused.ok()) return refused.status();
  auto reasons =
      registry.AddCounter(mn::kRelayReasonsTotal, mn::kRelayReasonsTotalHelp, {"app", "reason"});
  if (!reasons.ok()) return reasons.status();
  auto latency =
      registry.AddHistogram(mn::kRelayForwardLatencySeconds, mn::kRelayForwardLatencySecondsHelp,
                            {"app"}, mn::kDeliveryLatencyBuckets);
  if (!latency.ok()) return latency.status();
  auto stopped =
      registry.AddGauge(mn::kRelayAppStopped, mn::kRelayAppStoppedHelp, {"app", "reason"});
  if (!stopped.ok()) return stopped.status();
  messages_ = *messages;
  refused_ = *refused;
  reasons_ = *reasons;
  latency_ = *latency;
  stopped_ = *stopped;
  for (auto& [name, f] : apps_) {  // the apps known so far show from the first scrape
    for (const char* e : {"accepted", "forwarded", "retried", "dead", "gone"}) {
      messages_->WithLabels({name, e});
    }
  }
  return Status::Ok();
}

RelayAppFigures& RelayCounters::App(const std::string& app, const std::string& service,
                                    const std::string& target) {
  auto [it, fresh] = apps_.try_emplace(app);
  if (fresh) {
    it->second.app = app;
    it->second.service = service;
    it->second.target = target;
  }
  return it->second;
}

void RelayCounters::Accepted(RelayAppFigures& f) {
  ++f.accepted;
  if (messages_) messages_->WithLabels({f.app, "accepted"}).Increment();
}

void RelayCounters::Refused(RelayAppFigures& f, int status) {
  ++f.refused[status];
  if (refused_) refused_->WithLabels({f.app, std::to_string(status)}).Increment();
}

void RelayCounters::Attempt(RelayAppFigures& f, RelayEvent event, const std::string& reason,
                            double latency_seconds) {
  switch (event) {
    case RelayEvent::kForwarded:
      ++f.forwarded;
      break;
    case RelayEvent::kRetried:
      ++f.retried;
      break;
    case RelayEvent::kDead:
      ++f.dead;
      break;
    case RelayEvent::kGone:
      ++f.gone;
      break;
  }
  if (messages_) messages_->WithLabels({f.app, EventName(event)}).Increment();
  if (!reason.empty()) {
    ++f.reasons[reason];
    if (reasons_) reasons_->WithLabels({f.app, reason}).Increment();
  }
  if (latency_seconds >= 0) {
    ++f.latency_count;
    f.latency_sum_seconds += latency_seconds;
    if (latency_) latency_->WithLabels({f.app}).Observe(latency_seconds);
  }
}

void RelayCounters::Unsubscribe(RelayAppFigures& f) {
  ++f.unsubscribes;
  if (messages_) messages_->WithLabels({f.app, "unsubscribe"}).Increment();
}

void RelayCounters::Stopped(RelayAppFigures& f, const std::string& reason,
                            std::optional<TimePoint> until) {
  if (stopped_ && !f.stopped_reason.empty() && f.stopped_reason != reason) {
    stopped_->WithLabels({f.app, f.stopped_reason}).Set(0);
  }
  if (stopped_ && !reason.empty()) stopped_->WithLabels({f.app, reason}).Set(1);
  f.stopped_reason = reason;
  f.stopped_until = reason.empty() ? std::nullopt : until;
}

std::vector<RelayAppFigures> RelayCounters::Snapshot() const {
  std::vector<RelayAppFigures> out;
  for (const auto& [name, f] : apps_) out.push_back(f);
  return out;
}

}  // namespace bulkhead
