// DeferredTakenMarks: the TakenMarks part of DeferredStore (deferred_store.h): forwards each call
// to the inner store's part and posts its answer through `poster`, so that no answer arrives before
// the call returns.
#pragma once

#include <functional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bulkhead/store/taken_marks.h"

namespace bulkhead {

class DeferredTakenMarks final : public TakenMarks {
 public:
  using Poster = std::function<void(std::function<void()>)>;
  DeferredTakenMarks(TakenMarks& inner, Poster poster)
      : inner_(inner), poster_(std::move(poster)) {}

  void PushMarked(std::vector<MarkedJob> jobs, TimePoint until, TimePoint now,
                  PushedCallback durable) override {
    inner_.PushMarked(std::move(jobs), until, now, Posted(std::move(durable)));
  }
  void Forget(std::vector<std::string> marks, Done durable) override {
    inner_.Forget(std::move(marks), durable ? Posted(std::move(durable)) : nullptr);
  }
  void Expire(TimePoint now, size_t limit, CountCallback cb) override {
    inner_.Expire(now, limit, Posted(std::move(cb)));
  }
  void Count(CountCallback cb) override { inner_.Count(Posted(std::move(cb))); }

 private:
  template <typename... Args>
  std::function<void(Args...)> Posted(std::function<void(Args...)> cb) {
    return [poster = poster_, cb = std::move(cb)](Args... args) {
      poster([cb, args = std::make_tuple(std::move(args)...)]() mutable {
        std::apply(cb, std::move(args));
      });
    };
  }

  TakenMarks& inner_;
  Poster poster_;
};

}  // namespace bulkhead
