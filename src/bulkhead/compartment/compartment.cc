#include "bulkhead/compartment/compartment.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace bulkhead {
namespace {

// Nearest-rank percentile of a non-empty, sorted sample.
Duration Percentile(const std::vector<Duration>& sorted, double q) {
  const auto n = static_cast<double>(sorted.size());
  auto rank = static_cast<size_t>(std::ceil(q * n));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

}  // namespace

const char* ParkReasonName(ParkReason r) {
  switch (r) {
    case ParkReason::kNone:
      return "none";
    case ParkReason::kRetryAfter:
      return "retry_after";
    case ParkReason::kBreakerOpen:
      return "breaker_open";
    case ParkReason::kProbeInFlight:
      return "probe_in_flight";
    case ParkReason::kAtCapacity:
      return "at_capacity";
    case ParkReason::kParkedAhead:
      return "parked_ahead";
  }
  return "unknown";
}

Compartment::Compartment(std::string host, const CompartmentConfig& config, Rng& rng, TimePoint now)
    : host_(std::move(host)),
      config_(config),
      limit_(config.limit),
      breaker_(config.breaker, rng),
      last_activity_(now) {}

bool CompartmentByHost::operator()(const Compartment* a, const Compartment* b) const {
  return a->host() < b->host();
}

Compartment::~Compartment() { AttachIndex(nullptr); }

void Compartment::AttachIndex(CompartmentIndex* index) {
  if (index_ != nullptr) {
    index_->parked.erase(this);
    if (in_flight_ > 0) --index_->holders;
  }
  index_ = index;
  if (index_ != nullptr) {
    if (!parked_.empty()) index_->parked.insert(this);
    if (in_flight_ > 0) ++index_->holders;
  }
}

void Compartment::OnParkedChanged() {
  if (index_ == nullptr) return;
  if (parked_.empty()) {
    index_->parked.erase(this);
  } else {
    index_->parked.insert(this);
  }
}

ParkReason Compartment::Check(TimePoint now, bool ignore_parked) const {
  if (retry_after_until_ && now < *retry_after_until_) return ParkReason::kRetryAfter;
  const BreakerState state = breaker_.state(now);
  if (state == BreakerState::kOpen) return ParkReason::kBreakerOpen;
  if (state == BreakerState::kHalfOpen && ProbesHeld(now)) return ParkReason::kProbeInFlight;
  if (!ignore_parked && !parked_.empty()) return ParkReason::kParkedAhead;
  if (!breaker_.CanAcquire(now)) return ParkReason::kProbeInFlight;
  if (in_flight_ >= limit_.limit()) return ParkReason::kAtCapacity;
  return ParkReason::kNone;
}

AcquireResult Compartment::Admit(TimePoint now, bool ignore_parked) {
  AcquireResult r;
  r.not_before = now;
  r.reason = Check(now, ignore_parked);
  if (r.reason == ParkReason::kRetryAfter) {
    r.not_before = *retry_after_until_;
  } else if (r.reason == ParkReason::kBreakerOpen) {
    r.not_before = breaker_.open_until();
  }
  if (r.reason != ParkReason::kNone) return r;
  // Check() said the breaker admits, so this cannot fail.
  r.granted = breaker_.TryAcquire(now, &r.permit.breaker);
  if (!r.granted) {
    r.reason = ParkReason::kProbeInFlight;
    return r;
  }
  if (in_flight_++ == 0 && index_ != nullptr) ++index_->holders;
  last_activity_ = now;
  return r;
}

AcquireResult Compartment::TryAcquire(TimePoint now) { return Admit(now, /*ignore_parked=*/false); }

void Compartment::OnResult(const CompartmentPermit& permit, const Outcome& outcome,
                           Duration latency, TimePoint now, std::optional<TimePoint> retry_after) {
  if (in_flight_ > 0 && --in_flight_ == 0 && index_ != nullptr) --index_->holders;
  last_activity_ = now;
  if (latency < Duration::zero()) latency = Duration::zero();

  switch (outcome.host) {
    case HostSignal::kHealthy: {
      ++successes_;
      failing_since_.reset();
      RecordLatency(latency);
      const bool slow =
          config_.slow_call_threshold > Duration::zero() && latency > config_.slow_call_threshold;
      if (slow) {
        breaker_.OnFailure(permit.breaker, now);
      } else {
        breaker_.OnSuccess(permit.breaker, now);
      }
      limit_.OnResult(LimitSignal::kSuccess, latency, now, in_flight_);
      break;
    }
    case HostSignal::kFailure:
      ++failures_;
      RecordError(outcome.reason, now);
      if (!failing_since_) failing_since_ = now - latency;
      RecordLatency(latency);
      breaker_.OnFailure(permit.breaker, now);
      limit_.OnResult(LimitSignal::kCongestion, latency, now, in_flight_);
      break;
    case HostSignal::kOverloaded:
      // Alive but asking for less: shrink and, if it persists, open the breaker (a host that keeps
      // answering 429 must not be hammered until it bans us). Not "failing" for availability.
      ++overloaded_;
      RecordError(outcome.reason, now);
      RecordLatency(latency);
      breaker_.OnFailure(permit.breaker, now);
      limit_.OnResult(LimitSignal::kCongestion, latency, now, in_flight_);
      break;
    case HostSignal::kNone:
      breaker_.OnIgnored(permit.breaker, now);
      break;
  }

  if (retry_after && *retry_after > now &&
      (!retry_after_until_ || *retry_after > *retry_after_until_)) {
    retry_after_until_ = *retry_after;
  }
}

void Compartment::RecordError(const std::string& reason, TimePoint now) {
  last_error_ = reason;
  last_error_at_ = now;
}

void Compartment::ForgetLastError() {
  last_error_.clear();
  last_error_at_.reset();
}

void Compartment::RecordLatency(Duration latency) {
  const double us =
      static_cast<double>(std::chrono::duration_cast<std::chrono::microseconds>(latency).count());
  if (!have_latency_) {
    latency_ewma_us_ = us;
    have_latency_ = true;
  } else {
    const double a = std::clamp(config_.latency_ewma_alpha, 0.0, 1.0);
    latency_ewma_us_ = a * us + (1 - a) * latency_ewma_us_;
  }
  const size_t cap = std::max<size_t>(1, config_.latency_window);
  if (latency_ring_.size() < cap) {
    latency_ring_.push_back(latency);
  } else {
    latency_ring_[latency_next_] = latency;
  }
  latency_next_ = (latency_next_ + 1) % cap;
}

Status Compartment::Park(std::string job_id) {
  if (config_.max_parked > 0 && parked_.size() >= config_.max_parked) {
    return Status::ResourceExhausted("too many parked jobs for host " + host_);
  }
  parked_.push_back(std::move(job_id));
  if (parked_.size() == 1) OnParkedChanged();
  return Status::Ok();
}

std::optional<ReadyJob> Compartment::NextReady(TimePoint now) {
  if (parked_.empty()) return std::nullopt;
  AcquireResult r = Admit(now, /*ignore_parked=*/true);
  if (!r.granted) return std::nullopt;
  ReadyJob job{std::move(parked_.front()), r.permit};
  parked_.pop_front();
  if (parked_.empty()) OnParkedChanged();
  return job;
}

bool Compartment::Unpark(const std::string& job_id) {
  auto it = std::find(parked_.begin(), parked_.end(), job_id);
  if (it == parked_.end()) return false;
  parked_.erase(it);
  if (parked_.empty()) OnParkedChanged();
  return true;
}

std::optional<TimePoint> Compartment::NextWakeup(TimePoint now) const {
  if (parked_.empty()) return std::nullopt;
  switch (Check(now, /*ignore_parked=*/true)) {
    case ParkReason::kRetryAfter: {
      // When Retry-After ends the breaker may still be open.
      TimePoint t = *retry_after_until_;
      if (breaker_.state(now) == BreakerState::kOpen) t = std::max(t, breaker_.open_until());
      return t;
    }
    case ParkReason::kBreakerOpen:
      return breaker_.open_until();
    case ParkReason::kProbeInFlight:
      // Another node's probe: its result comes as a host state change, or the hold lapses.
      if (breaker_.state(now) == BreakerState::kHalfOpen && ProbesHeld(now)) {
        return *probe_hold_until_;
      }
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

CompartmentState Compartment::State(TimePoint now) const {
  CompartmentState s;
  if (breaker_.state(now) != BreakerState::kClosed) s.breaker_open_until = breaker_.open_until();
  if (s.breaker_open_until || failing_since_) {
    s.breaker_series_openings = breaker_.series_openings();
    s.breaker_openings = breaker_.openings();
  }
  s.failing_since = failing_since_;
  if (retry_after_until_ && now < *retry_after_until_) s.retry_after_until = retry_after_until_;
  return s;
}

void Compartment::Restore(const CompartmentState& state, TimePoint now) {
  breaker_.Restore(state.breaker_open_until, state.breaker_series_openings, state.breaker_openings,
                   now);
  failing_since_ = state.failing_since;
  retry_after_until_.reset();
  if (state.retry_after_until && now < *state.retry_after_until) {
    retry_after_until_ = state.retry_after_until;
  }
}

bool Compartment::unavailable(TimePoint now) const {
  return failing_since_ && now - *failing_since_ >= config_.unavailable_after;
}

bool Compartment::Evictable(TimePoint now, Duration idle_after, Duration failing_retention) const {
  if (in_flight_ > 0 || !parked_.empty()) return false;
  if (retry_after_until_ && now < *retry_after_until_) return false;
  const Duration idle = now - last_activity_;
  // An open or half-open breaker with no more traffic would otherwise pin a dead host forever.
  const bool failing = failing_since_ || breaker_.consecutive_failures() > 0 ||
                       breaker_.state(now) != BreakerState::kClosed;
  return idle >= (failing ? failing_retention : idle_after);
}

CompartmentSnapshot Compartment::Snapshot(TimePoint now) const {
  CompartmentSnapshot s;
  s.host = host_;
  s.in_flight = in_flight_;
  s.limit = limit_.limit();
  s.breaker = breaker_.state(now);
  s.breaker_openings = breaker_.openings();
  s.time_until_probe = breaker_.TimeUntilProbe(now);
  s.latency_ewma = std::chrono::duration_cast<Duration>(
      std::chrono::microseconds(static_cast<int64_t>(std::llround(latency_ewma_us_))));
  if (!latency_ring_.empty()) {
    std::vector<Duration> sorted = latency_ring_;
    std::sort(sorted.begin(), sorted.end());
    s.latency_p50 = Percentile(sorted, 0.50);
    s.latency_p99 = Percentile(sorted, 0.99);
  }
  s.successes = successes_;
  s.failures = failures_;
  s.overloaded = overloaded_;
  s.parked = parked_.size();
  s.unavailable = unavailable(now);
  s.failing_since = failing_since_;
  if (retry_after_until_ && now < *retry_after_until_) s.retry_after_until = retry_after_until_;
  if (s.breaker != BreakerState::kClosed) s.breaker_open_until = breaker_.open_until();
  s.last_error = last_error_;
  s.last_error_at = last_error_at_;
  return s;
}

}  // namespace bulkhead
