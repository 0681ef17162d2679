// RedisStore: the Store on a Redis server (redis://, rediss://, redis-sentinel://), shared by every
// bulkhead node that uses the same namespace. The key layout and the atomic steps are the scripts
// of redis_scripts/ (README.md there); each change is one EVALSHA, each signing-key or host-state
// change one plain command (HSET/HDEL on {NS}:keys and {NS}:hosts).
//
// Semantics are EmbeddedStore's (the same results, errors and counts), with these differences:
// - Every answer comes later, through the io_context, in the order of the calls (one pipelined
//   connection). Mutate takes several round trips (it reads the set in pages, filters in C++,
//   then applies its changes in chunks; kClear deletes in chunks): calls made meanwhile are held
//   and sent once it is done, so they still take effect after it. Other nodes' calls may
//   interleave with its chunks (each chunk skips jobs that left the set).
// - Errors: a lost or absent connection answers Unavailable("store unavailable: ..."); Redis
//   refusing a write for memory (maxmemory, OOM) answers ResourceExhausted with Redis's reason;
//   any other error reply Internal naming the step. Never degraded (Redis keeps no sticky state
//   to lose): when the connection comes back, calls succeed again.
// - Connections: two RedisClients (redis/redis_client.h says how each stays up: reconnect with
//   backoff, Sentinel, READONLY, availability, one log line per change), one for commands (a
//   command unanswered for 10 s, plus the WAIT timeout, ends it as lost) and one subscribed to
//   {NS}:wake, {NS}:hosts and {NS}:signals (a PING every heartbeat_every, so a half-open socket
//   there is taken for lost within heartbeat_every + 10 s). Each connect of the commands' client
//   loads the scripts before any other command (its on-connected hook). While it is down, calls
//   answer Unavailable at once, and unavailable_reason() is "store unavailable: " + its reason
//   ("store unavailable: redis HOST:PORT: connection refused, retrying"). Once it is back the
//   store gives back the reservations whose FETCH reply the loss swallowed
//   (redis_store_reclaim.cc) and refreshes its alive key.
// - Unreachable at start (refused, timed out, name not resolving; Sentinels not answering): Open
//   returns OK after its first attempt and the store is unavailable until the commands' client
//   connects; it then does what Open does (layout check, register, scripts, heartbeat and reaper,
//   subscription) before any call is let through. A namespace of another layout version or a
//   refused password found then is fatal: the fatal handler gets the error (store.h
//   SetFatalHandler) and the store stays unavailable, retrying no more. Reachable at start, both
//   still fail Open.
// - The wake handler (cluster()) runs for every "NODE N QUEUE" message on {NS}:wake from another
//   node.
// - durability = "replicated": PUSH, ACK and FailReserved answer only once `WAIT 1 timeout`
//   reports a replica holds the write; otherwise Unavailable naming the timeout.
// - Shared: cluster() is a RedisClusterLink, shared() true (other nodes' reservations are in the
//   working set; see cluster_link.h).
// - Node liveness (redis_scripts/README.md, "Node liveness"): from Open on, the store refreshes
//   {NS}:alive:NODE (TTL heartbeat_ttl) every heartbeat_every, and every reap_every gives back the
//   reservations of registered nodes whose alive key is gone (reap.lua: to the oldest end of
//   their queues, no retry spent), logging once per reaped node. Close (a graceful stop), once
//   the commands already sent are answered, unregisters the node and deletes its alive key in
//   one step: its reservations of the give_back_at_stop queues are given back, the others stay,
//   as across a Faktory restart, until an ACK or FAIL through any node or their expiry. Timers
//   run on the io_context; their commands are never held behind a Mutate.
//
// Threading: not thread-safe; every method on the io_context's thread, which runs the callbacks,
// except unavailable_reason() (any thread). The io_context must outlive the store; Open runs it
// (bounded) until the store is ready.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "bulkhead/redis/redis_client.h"
#include "bulkhead/redis/redis_url.h"
#include "bulkhead/store/redis_batches.h"
#include "bulkhead/store/redis_calls.h"
#include "bulkhead/store/redis_cluster_link.h"
#include "bulkhead/store/redis_cron_claims.h"
#include "bulkhead/store/redis_holders.h"
#include "bulkhead/store/redis_host_states.h"
#include "bulkhead/store/redis_script_id.h"
#include "bulkhead/store/redis_signing_keys.h"
#include "bulkhead/store/redis_taken_marks.h"
#include "bulkhead/store/redis_throttles.h"
#include "bulkhead/store/redis_tracks.h"
#include "bulkhead/store/redis_unique_locks.h"
#include "bulkhead/store/store.h"

namespace bulkhead {

struct RedisStoreOptions {
  RedisUrl url;
  std::string redis_namespace = "bulkhead";
  std::string ca_file;  // rediss:// only; empty: the system's CA paths
  // Names this process in {NS}:nodes, its reservations and its wake messages; unique per process.
  std::string node_id;
  bool replicated = false;  // durability = "replicated"
  std::chrono::milliseconds wait_timeout{1000};
  // Bounds Open (resolving, connecting, the layout check, loading the scripts, subscribing), and
  // Close's wait for the commands already sent and its give-back.
  std::chrono::milliseconds open_timeout{10000};
  // Node liveness: how often {NS}:alive:NODE is refreshed, how long it lives unrefreshed (a node
  // silent longer than this is presumed dead), how often the other nodes are checked.
  std::chrono::milliseconds heartbeat_every{5000};
  std::chrono::milliseconds heartbeat_ttl{15000};
  std::chrono::milliseconds reap_every{5000};
  // Queues whose reservations only this node can end (its own delivery engine's): a graceful stop
  // gives them back at once instead of handing them over to their expiry.
  std::vector<std::string> give_back_at_stop;
};

class StoreScripts;
class RedisTakenMarks;

class RedisStore final : public Store, private RedisCalls {
 public:
  // The layout version this build writes and reads ({NS}:meta `layout`).
  static constexpr int kLayoutVersion = 2;

  RedisStore(boost::asio::io_context& io, RedisStoreOptions options);
  ~RedisStore() override;

  std::string_view Name() const override { return "redis"; }
  std::string unavailable_reason() const override;
  void SetFatalHandler(FatalHandler handler) override { fatal_handler_ = std::move(handler); }
  // Connects (asking Sentinel first), checks or writes the layout version (FailedPrecondition
  // naming both versions when it differs), registers the node, loads the scripts and subscribes.
  // Refused AUTH: the error names the URL without its password. Unreachable server: OK, and the
  // store stays unavailable until the background reconnect has done all of this (see above).
  // Writes the node's alive key before it registers the node, then starts the heartbeat and
  // reaper timers.
  Status Open() override;
  // A graceful stop: stops the timers, waits (bounded by open_timeout) until the commands already
  // sent are answered, then unregisters the node and deletes its alive key (reap.lua 'stop': its
  // reservations of give_back_at_stop go back to their queue, the others stay until ACK, FAIL or
  // expiry), then closes the connections. Runs the io_context meanwhile, as Open does.
  void Close() override;

  void Push(JobRecord job, Done durable) override;
  void Fetch(const std::vector<std::string>& queues, TimePoint now, JobCallback cb) override;
  void FetchFor(const std::vector<std::string>& queues, const std::string& wid, TimePoint now,
                JobCallback cb) override;
  void Ack(const std::string& jid, TimePoint now, JobCallback durable) override;
  void GetWorking(const std::string& jid, JobCallback cb) override;
  void ExtendReservation(const std::string& jid, TimePoint until, Done durable) override;
  void FailReserved(const std::string& jid, TimePoint reserved_until, std::optional<JobRecord> next,
                    bool count_failure, TimePoint now, Done durable) override;
  void Move(JobRecord job, TimePoint now, Done durable) override;
  void Remove(const std::string& jid, Done durable) override;
  void EnqueueDue(JobState set, TimePoint now, size_t limit, JobsCallback cb) override;
  void ExpiredReservations(TimePoint now, size_t limit, JobsCallback cb) override;
  void PurgeDead(TimePoint now, size_t limit, CountCallback cb) override;
  void Mutate(MutateOp op, JobState set, const MutateFilter& filter, TimePoint now,
              Duration dead_ttl, CountCallback durable) override;
  void SetPaused(const std::vector<std::string>& queues, bool paused, Done durable) override;
  void RemoveQueues(const std::vector<std::string>& queues, Done durable) override;
  void CountOutcome(int64_t processed, int64_t failures, TimePoint now) override;
  void Flush(Done durable) override;
  void Stats(std::function<void(Result<StoreStats>)> cb) override;
  void List(JobState set, size_t offset, size_t limit, JobsCallback cb) override;
  // find_job.lua: one HGET of {NS}:jobs and the score (redis_store_ops.cc).
  void FindJob(const std::string& jid, JobCallback cb) override;

  // The parts (redis_<part>.h).
  ClusterLink& cluster() override { return cluster_; }
  UniqueLocks& unique_locks() override { return unique_locks_; }
  CronClaims& cron_claims() override { return cron_claims_; }
  BatchStore& batches() override { return batches_; }
  TrackStore& tracks() override { return tracks_; }
  ThrottleStore& throttles() override { return throttles_; }
  HolderStore& holders() override { return holders_; }
  SigningKeyStore& signing_keys() override { return signing_keys_; }
  HostStateStore& host_states() override { return host_states_; }
  // Marks of jobs taken from elsewhere ({NS}:taken, push_marked.lua).
  TakenMarks& taken_marks() override { return taken_marks_; }

  // One reaper pass now (the timer's): gives back the reservations of every other registered node
  // whose alive key is gone. `done` gets how many were given back.
  void ReapDeadNodes(CountCallback done);
  // Reaper passes answered so far, and the reservations they gave back in all.
  int64_t reaper_passes() const { return reaper_passes_; }
  int64_t reservations_given_back() const { return reservations_given_back_; }

  // Reservations given back after a reconnect because their FETCH reply was lost
  // (redis_store_reclaim.cc).
  int64_t reservations_reclaimed() const { return reservations_reclaimed_; }

  // Tests only. Abandon: what kill -9 leaves behind: the timers stop and the connections close
  // without sending anything (the alive key expires by itself); the store then answers nothing
  // more and destroying it does nothing else. PauseHeartbeats: the heartbeat timer keeps running
  // but sends nothing while paused (a node that is slow, not dead).
  void AbandonForTests();
  void PauseHeartbeatsForTests(bool paused) { heartbeats_paused_ = paused; }

 private:
  // RedisCalls (redis_calls.h), what the parts call: Eval, EvalReplicated, Command (each held
  // behind a multi-step Mutate; SendEval and SendCommand are Mutate's own, never held), HandOut.
  void Eval(Script script, const char* step, std::vector<std::string> args,
            ReplyCallback cb) override;
  void EvalReplicated(Script script, const char* step, std::vector<std::string> args,
                      ReplyCallback cb) override;
  void Command(const char* step, std::vector<std::string> argv, ReplyCallback cb) override;
  void HandOut(const Result<RedisReply>& reply, const JobCallback& cb) override;
  const std::string& key_prefix() const override { return prefix_; }
  const std::string& node() const override { return options_.node_id; }
  void SendEval(Script script, const char* step, std::vector<std::string> args, ReplyCallback cb);
  void SendCommand(const char* step, std::vector<std::string> argv, ReplyCallback cb);
  // The commands' on-connected hook sends with these (RedisClient::SendRaw): they go before the
  // store is available; a transport failure reaches `cb` as the client reported it
  // (AnsweringSetup), so that it becomes the client's reason as it is.
  void RawEval(Script script, const char* step, std::vector<std::string> args, ReplyCallback cb);
  void RawCommand(const char* step, std::vector<std::string> argv, ReplyCallback cb);
  // Wraps `cb` for a reply to `step`: an error reply or a transport failure reaches `cb` as the
  // Status ReplyError makes of it (AnsweringSetup: an error reply only).
  static ReplyCallback Answering(const char* step, ReplyCallback cb);
  static ReplyCallback AnsweringSetup(const char* step, ReplyCallback cb);
  // Ends a multi-step Mutate: sends the calls held meanwhile, in order, until one starts another.
  void ReleaseHeld();
  // Coalescing (redis_store_coalesce.cc): Push, Fetch (FetchFor) and Ack calls made one after
  // another, with no other call between them, before the loop runs its next handler go out as one
  // call of push.lua, fetch.lua or ack.lua (each takes many), and each still gets
  // its own answer, in order. `item` is the call's part of ARGV; `key` (Ack: the day) must match
  // the batch's. Any other command first sends the batch (FlushBatch), so every call takes effect
  // in call order.
  enum class BatchKind { kNone, kPush, kFetch, kAck };
  void Coalesce(BatchKind kind, std::string_view key, std::vector<std::string> item,
                ReplyCallback cb);
  void FlushBatch();
  // The Status a transport result or an error reply means; OK for any other reply.
  static Status ReplyError(const Result<RedisReply>& r, const char* step);

  // Pages through `set` (read-only), then applies `op` to the matching jids in chunks.
  void MutateMatching(MutateOp op, const std::string& set, MutateFilter filter, int64_t now_us,
                      int64_t dead_until_us, CountCallback durable);
  void ApplyMutate(MutateOp op, std::string set, std::shared_ptr<std::vector<std::string>> jids,
                   size_t from, int64_t now_us, int64_t dead_until_us, size_t changed,
                   CountCallback durable);
  void ClearSet(std::string set, size_t cleared, CountCallback durable);

  // Open's steps (and Close's), each run to completion on the io_context within the open
  // deadline.
  Status RunUntilDone(const std::function<bool()>& done, const std::string& what);
  // The options of the commands' client, or (`subscriber`) of the subscription's.
  RedisClientOptions ClientOptions(bool subscriber) const;
  // The commands' on-connected hook: loads the scripts and, until it has passed once, runs the
  // layout check. A layout of another version, or any failure but a transport one during Open,
  // fails the client for good (RedisClient::Fail); other failures let it retry.
  void OnCommandsConnected(RedisClient::DoneCallback done);
  // The commands' client changed state: back after a loss, it reclaims and refreshes the alive
  // key; available for the first time after Open returned (Redis was unreachable at start), it
  // starts the subscription and the liveness timers; failed after Open returned, it is fatal.
  void OnCommandsState(RedisClientState state, const Status& cause);
  // Checks or writes the layout version and registers the node (the first heartbeat); `done` gets
  // FailedPrecondition naming both versions when the namespace has another one.
  void SendLayoutCheck(std::function<void(Status)> done);
  // Sends SCRIPT LOAD for every script.
  void SendScriptLoads(std::function<void(Status)> done);
  void Fatal(const Status& cause);
  // A roster source was set (RedisClusterLink): the roster goes out at once when the store is open.
  void OnRosterSourceSet();

  // Node liveness (redis_store_liveness.cc). Heartbeat sends one refresh unless one is still
  // unanswered (its failure is the reconnect's to report).
  void Heartbeat();
  void StartLiveness();
  void ScheduleHeartbeat();
  void ScheduleReap();
  // Close's hand-over: waits for the commands already sent, then runs reap.lua 'stop'.
  void HandOverAtStop();
  // A heartbeat's reply ({had, live}; heartbeat.lua): records the live node count (calling the
  // node count handler when it changed) and returns `had`.
  int64_t NoteHeartbeat(const RedisReply& reply);
  // Reclaim of reservations whose FETCH reply was lost (redis_store_reclaim.cc).
  // HandOut (above) remembers a job handed out with its reservation, so that a reclaim keeps it
  // and its ACK names the reservation (Ack).
  // ReclaimLostReservations: after a reconnect, gives back the reservations of this node that are
  // not remembered. ReadReservedSet: SMEMBERS of this node's reservations (null on failure).
  // KeepStillReserved: prunes handed_out_ to `members`.
  void ReclaimLostReservations();
  void ReadReservedSet(std::function<void(const std::vector<std::string>*)> done);
  void KeepStillReserved(const std::vector<std::string>& members);
  // Stops the timers and both clients; nothing is sent. Close and AbandonForTests end here.
  void CloseConnections();

  // "YYYY-MM-DD" of `now` (UTC), formatted once per day.
  const std::string& Day(TimePoint now);

  boost::asio::io_context& io_;
  RedisStoreOptions options_;
  const std::string prefix_;  // "{NS}:"
  const std::string jobs_key_;
  const StoreScripts& scripts_;
  const std::unique_ptr<RedisClient> commands_;
  const std::unique_ptr<RedisClient> subscriber_;  // {NS}:wake, {NS}:hosts, {NS}:signals
  FatalHandler fatal_handler_;
  // Open is running (it reports what the clients find itself); the layout check has passed on
  // this store (Open, or the first connect after it); the subscription and the liveness timers
  // were started.
  bool opening_ = false;
  bool opened_ = false;
  bool started_ = false;
  bool closed_ = false;
  // Close has begun: no heartbeat or reaper pass starts any more (none may follow the stop step).
  bool stopping_ = false;
  // Liveness: the timers, whether a heartbeat / reaper pass is unanswered, whether the alive key
  // was found missing by the last heartbeat (logged once per lapse), the counters.
  std::unique_ptr<boost::asio::steady_timer> heartbeat_timer_, reap_timer_;
  bool heartbeat_in_flight_ = false;
  bool reap_in_flight_ = false;
  bool heartbeat_lapsed_ = false;
  bool heartbeats_paused_ = false;
  int64_t reaper_passes_ = 0;
  int64_t reservations_given_back_ = 0;
  // Reclaim: the jids whose FETCH replies reached a caller (pruned to those still reserved), the
  // size that starts the next pruning, whether one is under way, the count given back. Each jid
  // keeps the job it was handed out as, without its payload: its reservation (score, queue),
  // which its ACK sends along, and the answer to that ACK (ack.lua: an ACK of that very
  // reservation is answered without reading the job).
  std::unordered_map<std::string, JobRecord> handed_out_;
  size_t prune_at_ = 1024;
  bool pruning_ = false;
  int64_t reservations_reclaimed_ = 0;
  // A multi-step Mutate is running; the calls made meanwhile wait in held_.
  bool exclusive_ = false;
  std::deque<std::function<void()>> held_;
  // The calls being coalesced (all of batch_kind_): their ARGV parts in order, one callback each.
  BatchKind batch_kind_ = BatchKind::kNone;
  std::string batch_key_;
  std::vector<std::string> batch_args_;
  std::vector<ReplyCallback> batch_cbs_;
  bool batch_flush_posted_ = false;
  int64_t day_number_ = -1;
  std::string day_;
  // Cleared by the destructor: timers and posted work check it before touching the store.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  // The parts (store.h), over this store's calls.
  RedisClusterLink cluster_{*this, [this] { OnRosterSourceSet(); }};
  RedisUniqueLocks unique_locks_{*this};
  RedisCronClaims cron_claims_{*this};
  RedisBatches batches_{*this};
  RedisTracks tracks_{*this};
  RedisThrottles throttles_{*this};
  RedisHolders holders_{*this};
  RedisTakenMarks taken_marks_{*this};
  RedisSigningKeys signing_keys_{*this};
  RedisHostStates host_states_{*this};
};

}  // namespace bulkhead
