// DeferredTakenMarks: a TakenMarks that answers later (deferred_store.h), over an inner store's.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "bulkhead/store/taken_marks.h"
#include "bulkhead/store/testing/deferred_later.h"

namespace bulkhead {

class DeferredTakenMarks final : public TakenMarks {
 public:
  DeferredTakenMarks(TakenMarks& inner, Later later) : inner_(inner), later_(std::move(later)) {}

  void PushMarked(std::vector<MarkedJob> jobs, TimePoint until, TimePoint now,
                  PushedCallback durable) override {
    inner_.PushMarked(std::move(jobs), until, now, later_(std::move(durable)));
  }
  void Forget(std::vector<std::string> marks, Done durable) override {
    inner_.Forget(std::move(marks), later_.IfSet(std::move(durable)));
  }
  void Expire(TimePoint now, size_t limit, CountCallback cb) override {
    inner_.Expire(now, limit, later_(std::move(cb)));
  }
  void Count(CountCallback cb) override { inner_.Count(later_(std::move(cb))); }

 private:
  TakenMarks& inner_;
  Later later_;
};

}  // namespace bulkhead
