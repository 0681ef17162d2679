// StoreStats: sizes and counters of a store at one moment (INFO, /api/info, metrics).
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace bulkhead {

struct QueueStats {
  size_t size = 0;
  bool paused = false;
  int64_t oldest_enqueued_us = 0;  // enqueued_at of the job at the head; 0 when empty
};

struct StoreStats {
  std::map<std::string, QueueStats> queues;
  size_t scheduled = 0;
  size_t retries = 0;
  size_t dead = 0;
  size_t working = 0;
  size_t enqueued = 0;  // sum of queue sizes
  int64_t processed = 0;
  int64_t failures = 0;
};

}  // namespace bulkhead
