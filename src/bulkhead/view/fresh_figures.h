// The age rule for figures read off the event loop (the /metrics and StatsD collections): the
// loop publishes a snapshot (util/published.h) every second while something reads off the loop,
// and right before it serves a /metrics scrape; a collection takes the latest copy. Before the
// first publication, and once the latest copy is older than `max_age` (the loop has stopped
// publishing: it is stuck), the figures read from it are missing from the collection — the
// callback answers Unavailable, which the registry counts in
// bulkhead_metrics_collect_errors_total — never invented, never frozen.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "bulkhead/util/clock.h"
#include "bulkhead/util/published.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

// Where a collection reads a T: the published copies, the clock their time stamps come from, and
// how old a copy may be. `published` and `clock` must outlive the callbacks that read them.
template <typename T>
struct FreshSource {
  const Published<T>& published;
  TimePoint T::*stamp;  // when the copy was taken (by `clock`)
  const Clock& clock;
  Duration max_age;       // Duration::max(): figures that cannot go stale
  std::string_view what;  // "engine snapshot", for the Unavailable message
};

// OK while `stamp` is at most `max_age` old by `clock`; else Unavailable, naming `what` and the
// age in seconds.
Status CheckFresh(TimePoint stamp, const Clock& clock, Duration max_age, std::string_view what);

// The latest copy while it is fresh; Unavailable before the first publication and once it is
// older than `src.max_age`.
template <typename T>
Result<std::shared_ptr<const T>> LatestFresh(const FreshSource<T>& src) {
  std::shared_ptr<const T> latest = src.published.Latest();
  if (!latest) return Status::Unavailable("no " + std::string(src.what) + " published yet");
  Status fresh = CheckFresh((*latest).*src.stamp, src.clock, src.max_age, src.what);
  if (!fresh.ok()) return fresh;
  return latest;
}

}  // namespace bulkhead
