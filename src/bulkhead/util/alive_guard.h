// AliveGuard: drops the callbacks that arrive after their owner is gone. An owner whose calls
// answer later (a store's answer, a posted closure) keeps one as a member and wraps each callback
// that touches it with Guard(); once the owner, and so the guard, is destroyed, the wrapped
// callbacks do nothing when they run.
//
// Threading: the owner's (the callbacks run on the thread that destroys the owner).
#pragma once

#include <memory>
#include <utility>

namespace bulkhead {

class AliveGuard {
 public:
  AliveGuard() = default;
  AliveGuard(const AliveGuard&) = delete;
  AliveGuard& operator=(const AliveGuard&) = delete;

  // `f`, called with whatever the wrapper is called with, only while this guard exists.
  template <typename F>
  auto Guard(F f) const {
    return [alive = std::weak_ptr<bool>(alive_), f = std::move(f)](auto&&... args) mutable {
      if (alive.lock()) f(std::forward<decltype(args)>(args)...);
    };
  }

 private:
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace bulkhead
