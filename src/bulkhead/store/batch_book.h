// BatchBook: the batches of an embedded store (memory:, sqlite:) — every BatchRecord, which job or
// child batch belongs to which batch, and which job is which batch's callback — with the
// counting and firing rules of batch_record.h. Each mutation appends the record Changes that make
// it durable (spaces kBatchSpace, kBatchMemberSpace, kBatchCallbackSpace) and reports the callback
// jobs to push and the counters to bump in BatchEffects; MemoryState applies those in the same
// change, so a member's ACK, its batch's counting and the callback's push commit together.
//
// Thread-compatible, like MemoryState (its owner).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "bulkhead/store/batch_record.h"
#include "bulkhead/store/change.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

inline constexpr char kBatchSpace[] = "batch";               // bid -> BatchRecord (JSON)
inline constexpr char kBatchMemberSpace[] = "batch_member";  // jid or child bid -> "BID\tS"
inline constexpr char kBatchCallbackSpace[] = "batch_cb";    // callback jid -> "BID\tWHICH"

// What a batch mutation asks of the jobs and counters beside it.
struct BatchEffects {
  std::vector<JobRecord> fire;  // callback jobs to add (state kScheduled, due now)
  BatchCounts counts;           // deltas
};

class BatchBook {
 public:
  // Loading (at open): one persisted record of one of the three spaces.
  Status Load(const std::string& space, const std::string& key, const std::string& value);

  // The batch `bid`, or null when unknown or expired at `now_us`.
  const BatchRecord* Find(const std::string& bid, int64_t now_us) const;

  // A new batch (AlreadyExists when the bid is taken; NotFound "No such batch <parent>" when
  // parent_bid names no live batch, which otherwise gains it as a member).
  Status Create(BatchRecord batch, int64_t now_us, std::vector<Change>& out, BatchEffects& fx);
  // `member` (a jid) joins batch `bid`. NotFound "No such batch <bid>".
  Status Join(const std::string& bid, const std::string& member, int64_t now_us,
              std::vector<Change>& out);
  // Commits `bid` (again: no change but a settle). NotFound "No such batch <bid>".
  Status Commit(const std::string& bid, int64_t now_us, std::vector<Change>& out, BatchEffects& fx);
  // A job ended its reservation: ACKed, or FAILed (whether it retries, dies or is discarded).
  // Nothing when `jid` is neither a member nor a callback.
  void OnAck(const std::string& jid, int64_t now_us, std::vector<Change>& out, BatchEffects& fx);
  void OnFail(const std::string& jid, int64_t now_us, std::vector<Change>& out, BatchEffects& fx);
  // Deletes up to `limit` batches whose expires_us passed; returns how many.
  size_t Expire(int64_t now_us, size_t limit, std::vector<Change>& out, BatchEffects& fx);
  // FLUSH (the records go with Change::kDeleteAll).
  void Clear();

 private:
  enum class Event { kFailed, kRan, kSucceeded, kGone };
  struct Member {
    std::string bid;
    char status;  // 'p' not run yet, 'f' last attempt failed, 'x' ran (a child's complete done)
  };
  struct Callback {
    std::string bid;
    std::string which;  // "complete" or "success"
  };

  BatchRecord* Live(const std::string& bid, int64_t now_us);
  // Applies `e` to member `key` and settles its batch, then its parents as far as they change.
  void Apply(std::string key, Event e, int64_t now_us, std::vector<Change>& out, BatchEffects& fx);
  // Member change of Apply; the member's batch when something changed, else null.
  BatchRecord* ChangeMember(const std::string& key, Event e, std::vector<Change>& out);
  // Fires what is due in `b` and saves it; the event to tell its parent, if any.
  std::optional<Event> Settle(BatchRecord& b, int64_t now_us, std::vector<Change>& out,
                              BatchEffects& fx);
  void Fire(BatchRecord& b, bool complete, int64_t now_us, std::vector<Change>& out,
            BatchEffects& fx);
  void Save(const BatchRecord& b, std::vector<Change>& out);
  void SetExpiry(BatchRecord& b, int64_t expires_us);

  std::unordered_map<std::string, BatchRecord> batches_;
  std::set<std::pair<int64_t, std::string>> expiry_;  // (expires_us, bid) for expires_us != 0
  std::unordered_map<std::string, Member> members_;
  std::unordered_map<std::string, Callback> callbacks_;
};

// A record Change of `space`: put `value` under `key`, or (value nullopt) delete it.
Change RecordChange(const char* space, const std::string& key, std::optional<std::string> value);

}  // namespace bulkhead
