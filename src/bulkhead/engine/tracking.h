// Tracking: Faktory Enterprise's job tracking commands (TRACK SET, TRACK GET) over the store,
// which keeps the records and follows the state of jobs pushed with custom.track = 1
// (store/track_record.h). This class parses and validates what clients send and renders TRACK
// GET; docs/tracking.md is the user-facing contract.
//
// Threading and lifetime: as Engine (the event loop only); answers that arrive after it is
// destroyed are dropped.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "bulkhead/store/store.h"
#include "bulkhead/util/alive_guard.h"
#include "bulkhead/util/clock.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

class Tracking {
 public:
  using Done = std::function<void(Status)>;
  using TextCallback = std::function<void(Result<std::string>)>;

  Tracking(Store& store, Clock& clock);

  // TRACK SET {"jid", "percent", "desc", "reserve_until"}: jid required; percent an integer
  // 0..100; desc a string (null: unchanged); reserve_until RFC 3339, at most a day ahead, which
  // extends the job's reservation (never shortens it, as Faktory). InvalidArgument names the
  // field.
  void Set(std::string_view json_text, int max_json_depth, Done done);
  // TRACK GET <jid>: {"jid","percent","desc","state","updated_at"}; percent and desc absent when
  // unset; state "unknown" and updated_at "" when there is no record.
  void Get(const std::string& jid, TextCallback cb);

  // True when a job's JSON payload has custom.track = 1 (or true).
  static bool IsTracked(const std::string& payload);

 private:
  // Moves jid's reservation to `until` when it is reserved until earlier.
  void ExtendTo(const std::string& jid, TimePoint until, Done done);

  Store& store_;
  Clock& clock_;
  AliveGuard alive_;  // answers after this is gone are dropped
};

}  // namespace bulkhead
