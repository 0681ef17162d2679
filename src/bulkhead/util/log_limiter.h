// LogLimiter: keeps one repeated log line from flooding the log. The first line of a kind goes
// through; later ones of the same kind are dropped until `interval` has passed, and the next line
// let through says how many were dropped. A kind is any short key ("accept", "login:10.0.0.7").
//
// Bounded: at most `max_keys` kinds are remembered; past it the oldest is forgotten (its next
// line goes through as a first).
// Threading: not thread-safe; each instance belongs to one thread (the event loop).
#pragma once

#include <cstdint>
#include <list>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "bulkhead/util/clock.h"

namespace bulkhead {

class LogLimiter {
 public:
  explicit LogLimiter(const Clock& clock, Duration interval = std::chrono::seconds(10),
                      size_t max_keys = 1024);

  // nullopt: drop this line. Otherwise log it; the value is how many lines of this kind were
  // dropped since the last one let through.
  std::optional<int64_t> Admit(std::string_view key);

  // " (N similar lines suppressed)" for N > 0, else "": the suffix for a line Admit let through.
  static std::string SuppressedNote(int64_t dropped);

 private:
  struct Entry {
    TimePoint last_logged;
    int64_t dropped = 0;
    std::list<std::string>::iterator order;
  };
  const Clock& clock_;
  const Duration interval_;
  const size_t max_keys_;
  std::unordered_map<std::string, Entry> entries_;
  std::list<std::string> order_;  // oldest first
};

}  // namespace bulkhead
