// Engine::PushTaken: jobs taken from another system with their marks (engine.h,
// store/taken_marks.h).
#include <map>

#include "bulkhead/engine/engine.h"

namespace bulkhead {

void Engine::PushTaken(std::vector<MarkedJob> jobs, TimePoint mark_until, TakenCallback done) {
  std::vector<Status> results(jobs.size());
  if (std::string why = store_.unavailable_reason(); !why.empty()) {
    for (Status& r : results) r = Status::Unavailable(why);
    done(std::move(results));
    return;
  }
  std::vector<MarkedJob> valid;
  std::vector<size_t> index;  // valid[k] is jobs[index[k]]
  std::map<std::string, size_t> queued;
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (Status routed = ApplyJobKind(jobs[i].job); !routed.ok()) {
      results[i] = std::move(routed);
      continue;
    }
    if (jobs[i].job.state == JobState::kQueued) ++queued[jobs[i].job.queue];
    index.push_back(i);
    valid.push_back(std::move(jobs[i]));
  }
  store_.taken_marks().PushMarked(
      std::move(valid), mark_until, clock_.Now(),
      alive_.Guard([results = std::move(results), index = std::move(index),
                    done = std::move(done)](std::vector<Status> stored) mutable {
        for (size_t k = 0; k < index.size() && k < stored.size(); ++k) {
          results[index[k]] = std::move(stored[k]);
        }
        done(std::move(results));
      }));
  // Calls take effect in order (store.h): a FETCH the wake starts sees the jobs.
  for (const auto& [queue, count] : queued) WakeWaiters(queue, count);
}

}  // namespace bulkhead
