// Published<T>: the latest T one thread (the event loop) has published, for readers on any thread
// — how figures cross threads (the engine's EngineSnapshot, the dispatcher's DeliverySnapshot,
// read by the /metrics and StatsD collections). The publisher replaces the copy; a reader takes
// the latest one and never waits for the publisher's work, only for another pointer swap. How old
// a copy may be before a reader leaves it out is the reader's rule (view/fresh_figures.h).
//
// Thread-safe. Publish() and Latest() hold a mutex only long enough to swap or copy a pointer.
#pragma once

#include <memory>
#include <mutex>
#include <utility>

namespace bulkhead {

template <typename T>
class Published {
 public:
  // Replaces the latest copy.
  void Publish(T value) {
    auto next = std::make_shared<const T>(std::move(value));
    std::lock_guard lock(mu_);
    latest_.swap(next);  // the old copy is freed outside the lock, with `next`
  }
  // The latest published copy (immutable, shared with other readers), or null before the first
  // Publish().
  std::shared_ptr<const T> Latest() const {
    std::lock_guard lock(mu_);
    return latest_;
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const T> latest_;  // guarded by mu_
};

}  // namespace bulkhead
