// EmbeddedTakenMarks: TakenMarks (taken_marks.h) of the embedded stores. MemoryState holds the
// marks (TakenMarkBook) beside the jobs; a job and its mark go in the same change batch, which
// the sqlite: log commits in one transaction (the mark as a record of kTakenSpace).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "bulkhead/store/change.h"
#include "bulkhead/store/memory_state.h"
#include "bulkhead/store/taken_marks.h"

namespace bulkhead {

class EmbeddedTakenMarks final : public TakenMarks {
 public:
  // What it needs of its EmbeddedStore: the state, whether a change may be made now (OK, or the
  // status every change is refused with), and the commit of a change batch.
  struct Context {
    MemoryState& state;
    std::function<Status()> writable;
    std::function<void(std::vector<Change>, Done)> commit;
  };
  explicit EmbeddedTakenMarks(Context context) : c_(std::move(context)) {}

  void PushMarked(std::vector<MarkedJob> jobs, TimePoint until, TimePoint now,
                  PushedCallback durable) override;
  void Forget(std::vector<std::string> marks, Done durable) override;
  void Expire(TimePoint now, size_t limit, CountCallback cb) override;
  void Count(CountCallback cb) override { cb(c_.state.taken_marks().size()); }

 private:
  Context c_;
};

}  // namespace bulkhead
