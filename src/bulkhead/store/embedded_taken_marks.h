// EmbeddedTakenMarks: TakenMarks (taken_marks.h) of the embedded stores. MemoryState holds the
// marks (TakenMarkBook) beside the jobs; a job and its mark go in the same change batch, which
// the sqlite: log commits in one transaction (the mark as a record of kTakenSpace).
#pragma once

#include <string>
#include <vector>

#include "bulkhead/store/embedded_context.h"
#include "bulkhead/store/taken_marks.h"

namespace bulkhead {

class EmbeddedTakenMarks final : public TakenMarks {
 public:
  explicit EmbeddedTakenMarks(EmbeddedContext& context) : context_(context) {}

  void PushMarked(std::vector<MarkedJob> jobs, TimePoint until, TimePoint now,
                  PushedCallback durable) override;
  void Forget(std::vector<std::string> marks, Done durable) override;
  void Expire(TimePoint now, size_t limit, CountCallback cb) override;
  void Count(CountCallback cb) override { cb(context_.state().taken_marks().size()); }

 private:
  EmbeddedContext& context_;
};

}  // namespace bulkhead
