// RedisStore's reclaim of reservations whose FETCH reply was lost: a FETCH that Redis ran
// but whose reply never came back (the connection dropped, or the primary failed over right after)
// leaves a job reserved by this node that no caller knows of. The store remembers the jids whose
// FETCH replies it handed to its callers (handed_out_); when the command connection comes back, it
// gives back to their queues, without spending a retry, the jids of {NS}:reserved:NODE that are
// not among them (reap.lua 'lost'). handed_out_ is pruned to what is still reserved at each
// reclaim and whenever it has doubled, and loses a jid with its ACK, so it stays about the size
// of this node's reservations. It also keeps each jid's reservation for its ACK (RedisStore::Ack).
#include <spdlog/spdlog.h>

#include <unordered_map>

#include "bulkhead/store/redis_job_codec.h"
#include "bulkhead/store/redis_store.h"
#include "bulkhead/store/redis_store_scripts.h"
#include "bulkhead/util/clock.h"

namespace bulkhead {
namespace {

constexpr size_t kFirstPruneAt = 1024;

}  // namespace

void RedisStore::HandOut(const Result<RedisReply>& reply, const JobCallback& cb) {
  if (!reply.ok()) return cb(reply.status());
  if (!reply->is_array() || reply->elements().size() != 3) return cb(std::optional<JobRecord>());
  const auto& e = reply->elements();
  auto job = DecodeRedisJob(e[0].str(), e[1].str(), ScoreMicros(e[2]));
  if (!job.ok()) return cb(job.status());
  std::string payload = std::move(job->payload);  // kept without it (copied back below)
  handed_out_.insert_or_assign(job->jid, *job);
  job->payload = std::move(payload);
  if (handed_out_.size() >= prune_at_ && !pruning_) {
    pruning_ = true;
    ReadReservedSet([this](const std::vector<std::string>* members) {
      pruning_ = false;
      if (members != nullptr) KeepStillReserved(*members);
      prune_at_ = std::max(kFirstPruneAt, 2 * handed_out_.size());
    });
  }
  cb(std::optional<JobRecord>(std::move(*job)));
}

void RedisStore::ReadReservedSet(std::function<void(const std::vector<std::string>*)> done) {
  // Answered in order: every FETCH reply noted before this one ran before it, so `members` holds
  // every handed-out jid still reserved; later ones are noted after `done` runs.
  SendCommand("reclaim", {"SMEMBERS", prefix_ + "reserved:" + options_.node_id},
              [alive = std::weak_ptr<bool>(alive_), done](Result<RedisReply> r) {
                if (alive.expired()) return;
                if (!r.ok()) return done(nullptr);
                std::vector<std::string> members;
                for (const RedisReply& e : r->elements()) members.push_back(e.str());
                done(&members);
              });
}

void RedisStore::KeepStillReserved(const std::vector<std::string>& members) {
  std::unordered_map<std::string, JobRecord> kept;
  for (const std::string& jid : members) {
    auto it = handed_out_.find(jid);
    if (it != handed_out_.end()) kept.emplace(jid, std::move(it->second));
  }
  handed_out_.swap(kept);
}

void RedisStore::ReclaimLostReservations() {
  ReadReservedSet([this](const std::vector<std::string>* members) {
    if (members == nullptr) return;  // lost again: the next reconnect tries again
    std::vector<std::string> args{
        options_.node_id, std::to_string(ToUnixMicros(std::chrono::system_clock::now())), "lost"};
    for (const std::string& jid : *members) {
      if (handed_out_.count(jid) == 0) args.push_back(jid);
    }
    KeepStillReserved(*members);
    if (args.size() == 3) return;
    SendEval(Script::kReap, "reclaim", std::move(args),
             [this, alive = std::weak_ptr<bool>(alive_)](Result<RedisReply> r) {
               if (alive.expired() || !r.ok()) return;
               const int64_t n = r->integer();
               reservations_reclaimed_ += n;
               if (n > 0) {
                 spdlog::warn(
                     "redis store: node {} gave back {} reservations whose FETCH reply was lost "
                     "with the connection (no retry spent)",
                     options_.node_id, n);
               }
             });
  });
}

}  // namespace bulkhead
