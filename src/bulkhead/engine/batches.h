// Batches: Faktory Enterprise's batch commands (BATCH NEW, OPEN, COMMIT, STATUS) over the store,
// which keeps the batches and does their counting and callbacks (store/batch_record.h). This
// class parses and validates what clients send, makes bids, and renders BATCH STATUS; docs/
// batches.md is the user-facing contract.
//
// Threading and lifetime: as Engine (the event loop only); answers that arrive after it is
// destroyed are dropped.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "bulkhead/engine/job_parser.h"
#include "bulkhead/store/store.h"
#include "bulkhead/util/alive_guard.h"
#include "bulkhead/util/clock.h"
#include "bulkhead/util/rng.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

class Batches {
 public:
  using Done = std::function<void(Status)>;
  using TextCallback = std::function<void(Result<std::string>)>;

  Batches(Store& store, Clock& clock, Rng& rng, RetryDefault retry_for);
  ~Batches();

  // BATCH NEW {json}: the new bid ("b-" + 14 base64url characters). InvalidArgument names what
  // is wrong with the JSON (a non-empty bid, no callback, a bad callback job, ...); NotFound "No
  // such batch <parent_bid>".
  void New(std::string_view json_text, int max_json_depth, TextCallback cb);
  // BATCH OPEN <bid>: the bid. NotFound "No such batch <bid>".
  void Open(const std::string& bid, TextCallback cb);
  // BATCH COMMIT <bid>. NotFound "No such batch <bid>".
  void Commit(const std::string& bid, Done done);
  // BATCH STATUS <bid>: Faktory's status JSON. NotFound "No such batch <bid>".
  void GetStatus(const std::string& bid, TextCallback cb);

  // The custom.bid of a job's JSON payload (empty when it has none, or not a string).
  static std::string BatchIdOf(const std::string& payload);
  // A new bid.
  std::string MakeBid();

 private:
  Store& store_;
  Clock& clock_;
  Rng& rng_;
  RetryDefault retry_for_;
  AliveGuard alive_;  // answers after this is gone are dropped
};

}  // namespace bulkhead
