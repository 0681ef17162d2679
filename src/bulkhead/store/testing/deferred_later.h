// Later: wraps a store callback so that its answer is posted through a Poster instead of run where
// the inner store gives it. DeferredStore and its parts (deferred_<part>.h) answer every call
// through it: no answer arrives before the call returns, and answers arrive in the order they
// were given.
#pragma once

#include <functional>
#include <tuple>
#include <utility>

#include "bulkhead/store/store.h"

namespace bulkhead {

class Later {
 public:
  explicit Later(Store::Poster poster) : poster_(std::move(poster)) {}

  template <typename... Args>
  std::function<void(Args...)> operator()(std::function<void(Args...)> cb) const {
    return [poster = poster_, cb = std::move(cb)](Args... args) {
      poster([cb, args = std::make_tuple(std::move(args)...)]() mutable {
        std::apply(cb, std::move(args));
      });
    };
  }
  // As above; a null callback stays null (for calls whose callback may be empty).
  template <typename... Args>
  std::function<void(Args...)> IfSet(std::function<void(Args...)> cb) const {
    return cb ? (*this)(std::move(cb)) : nullptr;
  }

 private:
  Store::Poster poster_;
};

}  // namespace bulkhead
