#include "bulkhead/view/fresh_figures.h"

#include <string>

namespace bulkhead {

Status CheckFresh(TimePoint stamp, const Clock& clock, Duration max_age, std::string_view what) {
  Duration age = clock.Now() - stamp;
  if (age <= max_age) return Status::Ok();
  auto seconds = std::chrono::duration_cast<std::chrono::seconds>(age).count();
  return Status::Unavailable("the event loop has published no " + std::string(what) + " for " +
                             std::to_string(seconds) + " s");
}

}  // namespace bulkhead
