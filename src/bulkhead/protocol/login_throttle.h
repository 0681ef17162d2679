// LoginThrottle: slows password guessing down, per peer address. The first wrong password from an
// address costs nothing (a typo); each further one makes that address wait before its next
// password is checked: base_delay, then doubling per consecutive failure, at most max_delay. A
// HELLO that comes sooner is refused without checking its password, so one address can test at
// most one password per delay however many connections it opens. A right password clears the
// address; failures are forgotten after `forget_after` without one.
//
// Bounded: at most `max_peers` addresses are remembered (the one whose last failure is oldest is
// forgotten first).
// Threading: not thread-safe; the event loop's.
#pragma once

#include <string>
#include <unordered_map>

#include "bulkhead/util/clock.h"

namespace bulkhead {

class LoginThrottle {
 public:
  struct Options {
    Duration base_delay = std::chrono::milliseconds(250);  // zero turns the throttle off
    Duration max_delay = std::chrono::seconds(30);
    Duration forget_after = std::chrono::minutes(15);
    size_t max_peers = 10000;
  };
  LoginThrottle(const Clock& clock, Options options);

  // Zero when a password from `peer` may be checked now, else how long until it may.
  Duration Wait(const std::string& peer) const;
  // Records a wrong password from `peer`; returns its consecutive failures so far.
  int RecordFailure(const std::string& peer);
  // Records a right password from `peer`: its failures are forgotten.
  void RecordSuccess(const std::string& peer);

  size_t peers() const { return peers_.size(); }

 private:
  struct Peer {
    int failures = 0;
    TimePoint last_failure;
    TimePoint next_check;
  };
  void EvictIfFull();

  const Clock& clock_;
  const Options options_;
  std::unordered_map<std::string, Peer> peers_;
};

}  // namespace bulkhead
