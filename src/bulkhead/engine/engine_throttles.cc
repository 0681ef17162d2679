// Engine's part in queue throttling: waking FETCHes when a slot comes back, and the
// throttles' use in snapshots. The throttled FETCH itself is Engine::TakeJob (engine.cc).
#include "bulkhead/engine/engine.h"

namespace bulkhead {

void Engine::OnSlotReleased(const std::string& queue) {
  if (throttles_.Find(queue)) WakeWaiters(queue, 1);
}

void Engine::OnSlotTaken(const std::string& queue, TimePoint now) {
  throttles_.NoteSlotTaken(queue, now);
  ArmThrottleTimer();
}

void Engine::ArmThrottleTimer() {
  std::optional<TimePoint> next = throttles_.NextExpiry();
  if (stopped_ || !next) return;
  if (throttle_timer_at_ && *throttle_timer_at_ <= *next) return;  // fires early enough
  throttle_timer_.Cancel();
  throttle_timer_at_ = *next;
  TimePoint now = clock_.Now();
  throttle_timer_.ExpiresAfter(*next > now ? *next - now : Duration::zero());
  throttle_timer_.AsyncWait([this](boost::system::error_code ec) {
    if (ec || stopped_) return;
    throttle_timer_at_.reset();
    for (const std::string& queue : throttles_.PopExpired(clock_.Now())) {
      WakeWaiters(queue, SIZE_MAX);
    }
    ArmThrottleTimer();
  });
}

void Engine::AddThrottleUses(EngineSnapshot out, std::function<void(Result<EngineSnapshot>)> cb) {
  if (throttles_.empty()) {
    cb(std::move(out));
    return;
  }
  TimePoint now = out.now;
  store_.throttles().Uses(
      throttles_.all(), now,
      alive_.Guard([this, out = std::move(out),
                    cb = std::move(cb)](Result<std::vector<ThrottleUse>> uses) mutable {
        if (!uses.ok()) {
          cb(uses.status());
          return;
        }
        const std::vector<QueueThrottle>& all = throttles_.all();
        for (size_t i = 0; i < all.size() && i < uses->size(); ++i) {
          const QueueThrottle& t = all[i];
          out.throttles.push_back(ThrottleSnapshot{
              .queue = t.queue,
              .per_worker = t.per_worker,
              .limit = t.limit,
              .timeout_seconds = static_cast<int>(
                  std::chrono::duration_cast<std::chrono::seconds>(t.timeout).count()),
              .in_use = (*uses)[i].in_use,
              .max_per_worker = (*uses)[i].max_per_worker});
        }
        cb(std::move(out));
      }));
}

}  // namespace bulkhead
