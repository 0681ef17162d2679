#include "bulkhead/dispatch/log_done.h"

#include <spdlog/spdlog.h>

namespace bulkhead {

std::function<void(Status)> LogDone(std::string what, std::string subject) {
  return [what = std::move(what), subject = std::move(subject)](Status s) {
    if (!s.ok()) spdlog::warn("delivery {}: {} failed: {}", subject, what, s.message());
  };
}

}  // namespace bulkhead
