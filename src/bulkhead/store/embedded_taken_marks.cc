#include "bulkhead/store/embedded_taken_marks.h"

namespace bulkhead {

void EmbeddedTakenMarks::PushMarked(std::vector<MarkedJob> jobs, TimePoint until, TimePoint now,
                                    PushedCallback durable) {
  if (Status w = context_.Writable(); !w.ok()) {
    return durable(std::vector<Status>(jobs.size(), w));
  }
  const int64_t now_us = ToUnixMicros(now);
  const int64_t until_us = ToUnixMicros(until);
  TakenMarkBook& marks = context_.state().taken_marks();
  std::vector<Status> results;
  results.reserve(jobs.size());
  std::vector<Change> changes;
  for (MarkedJob& m : jobs) {
    if (m.mark.empty()) {
      results.push_back(Status::InvalidArgument("a taken job needs a mark"));
      continue;
    }
    if (marks.Holds(m.mark, now_us)) {
      results.push_back(Status::AlreadyExists("mark " + m.mark + " was taken already"));
      continue;
    }
    // Add refuses a known jid (AlreadyExists) before it changes anything.
    Status s = context_.state().Add(std::move(m.job), changes);
    if (s.ok()) marks.Put(m.mark, until_us, changes);
    results.push_back(std::move(s));
  }
  context_.Commit(std::move(changes),
                  [results = std::move(results), durable = std::move(durable)](Status s) mutable {
                    if (!s.ok()) {
                      for (Status& r : results) {
                        if (r.ok()) r = s;
                      }
                    }
                    durable(std::move(results));
                  });
}

void EmbeddedTakenMarks::Forget(std::vector<std::string> marks, Done durable) {
  if (Status w = context_.Writable(); !w.ok()) {
    if (durable) durable(w);
    return;
  }
  std::vector<Change> changes;
  for (const std::string& mark : marks) context_.state().taken_marks().Drop(mark, changes);
  context_.Commit(std::move(changes), std::move(durable));
}

void EmbeddedTakenMarks::Expire(TimePoint now, size_t limit, CountCallback cb) {
  if (Status w = context_.Writable(); !w.ok()) return cb(w);
  std::vector<Change> changes;
  size_t n = context_.state().taken_marks().Expire(ToUnixMicros(now), limit, changes);
  context_.Commit(std::move(changes), [n, cb = std::move(cb)](Status s) {
    if (!s.ok()) return cb(s);
    cb(n);
  });
}

}  // namespace bulkhead
