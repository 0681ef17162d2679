#include "bulkhead/dashboard/set_scan.h"

#include <algorithm>

namespace bulkhead::dashboard {
namespace {

struct Scan {
  Store* store;
  ScanRequest req;
  std::weak_ptr<void> alive;
  std::function<void(Result<JobListResult>)> done;
  JobListResult result;
  size_t position;  // of the next job to read
};

void Continue(std::shared_ptr<Scan> scan) {
  // The whole bound in one read (one store round trip; on Redis one script call).
  size_t chunk = scan->req.max_scan - scan->result.scanned;
  scan->store->List(scan->req.set, scan->position, chunk,
                    [scan, chunk](Result<std::vector<JobRecord>> jobs) {
                      if (scan->alive.expired()) return;
                      if (!jobs.ok()) return scan->done(jobs.status());
                      JobListResult& r = scan->result;
                      size_t consumed = 0;
                      for (auto& job : *jobs) {
                        size_t at = scan->position++;
                        ++consumed;
                        ++r.scanned;
                        if (!scan->req.match(job)) continue;
                        r.jobs.push_back(std::move(job));
                        r.positions.push_back(at);
                        if (r.jobs.size() >= scan->req.want) break;
                      }
                      r.next_offset = scan->position;
                      bool ended = jobs->size() < chunk;
                      bool full = r.jobs.size() >= scan->req.want;
                      // Unread jobs in this chunk, or a chunk that was not the set's last.
                      r.more = consumed < jobs->size() || !ended;
                      if (full || ended || r.scanned >= scan->req.max_scan) {
                        return scan->done(std::move(r));
                      }
                      Continue(scan);
                    });
}

}  // namespace

void ScanSet(Store& store, ScanRequest request, std::weak_ptr<void> alive,
             std::function<void(Result<JobListResult>)> done) {
  if (!request.match) {
    size_t offset = request.offset, want = request.want;
    store.List(request.set, offset, want + 1,
               [alive, offset, want, done = std::move(done)](Result<std::vector<JobRecord>> jobs) {
                 if (alive.expired()) return;
                 if (!jobs.ok()) return done(jobs.status());
                 JobListResult r;
                 r.scanned = jobs->size();
                 r.more = jobs->size() > want;
                 if (r.more) jobs->pop_back();
                 r.jobs = std::move(*jobs);
                 for (size_t i = 0; i < r.jobs.size(); ++i) r.positions.push_back(offset + i);
                 r.next_offset = offset + r.jobs.size();
                 done(std::move(r));
               });
    return;
  }
  auto scan = std::make_shared<Scan>(
      Scan{&store, std::move(request), std::move(alive), std::move(done), {}, 0});
  scan->position = scan->req.offset;
  if (scan->req.max_scan == 0) return scan->done(JobListResult{});
  Continue(std::move(scan));
}

}  // namespace bulkhead::dashboard
