#include "bulkhead/bridge/sidekiq_bridge.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>

#include "bulkhead/bridge/sidekiq_scripts.h"
#include "bulkhead/util/json.h"
#include "bulkhead/util/rng.h"

namespace bulkhead {
namespace {

constexpr std::chrono::milliseconds kReplyTimeout{10000};
constexpr std::chrono::minutes kExpireEvery{1};
constexpr size_t kExpireAtOnce = 10000;

// The host name, in the characters a node name may hold.
std::string HostNodeName() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "bulkhead";
  std::string name(buf);
  for (char& c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.';
    if (!ok) c = '-';
  }
  return name;
}

// Sidekiq's latency of a queue whose oldest job is `oldest` (api.rb Queue#latency: now minus its
// enqueued_at, none: 0).
double LatencyOf(const RedisReply& oldest, TimePoint now) {
  if (!oldest.is_string()) return 0;
  auto job = ParseJson(oldest.str(), kDefaultMaxJsonDepth);
  if (!job.ok() || !job->is_object() || !job->contains("enqueued_at")) return 0;
  std::optional<TimePoint> at = ReadSidekiqTimestamp((*job)["enqueued_at"]);
  if (!at) return 0;
  return std::max(0.0, std::chrono::duration<double>(now - *at).count());
}

}  // namespace

Result<SidekiqBridgeOptions> SidekiqBridgeOptionsFrom(const Config& config, bool shared,
                                                      const std::string& store_node) {
  const SidekiqSettings& k = config.sidekiq;
  SidekiqBridgeOptions o;
  auto url = ParseRedisUrl(k.redis);
  if (!url.ok()) return Status::InvalidArgument("sidekiq.redis: " + url.status().message());
  o.url = std::move(*url);
  o.ca_file = k.ca_file;
  auto format = ParseSidekiqTimeFormat(k.timestamps);
  if (!format) return Status::InvalidArgument("sidekiq.timestamps: \"" + k.timestamps + "\"");
  std::string node = !k.node.empty() ? k.node : shared ? store_node : HostNodeName();
  o.taker = TakerOptions{.queues = k.queues,
                         .node = node,
                         .batch = static_cast<size_t>(k.batch),
                         .mark_ttl = std::chrono::seconds(k.taken_ttl_seconds),
                         .limits = {.max_job_bytes = static_cast<size_t>(
                                        std::min(k.max_job_bytes, config.max_line_bytes)),
                                    .max_json_depth = config.max_json_depth},
                         .format = *format,
                         .dead_timeout_seconds = int64_t{k.dead_timeout_days} * 86400,
                         .dead_max_jobs = k.dead_max_jobs};
  o.outcomes.queue = k.outcomes_queue;
  o.outcomes.classes = SidekiqOutcomeClasses{.webpush_gone = k.webpush_gone_class,
                                             .delivery_dead = k.delivery_dead_class,
                                             .host_unavailable = k.host_unavailable_class,
                                             .host_available = k.host_available_class};
  o.outcomes.format = *format;
  o.liveness =
      LivenessOptions{.node = node,
                      .token = RandomHex(8),
                      .heartbeat_every = std::chrono::milliseconds(config.redis_heartbeat_ms),
                      .heartbeat_ttl = std::chrono::milliseconds(config.redis_heartbeat_ttl_ms),
                      .reap_every = std::chrono::milliseconds(config.redis_reap_ms),
                      .reap_others = shared};
  return o;
}

SidekiqBridge::SidekiqBridge(boost::asio::io_context& io, const Clock& clock, Engine& engine,
                             SidekiqBridgeOptions options)
    : io_(io),
      clock_(clock),
      engine_(engine),
      options_(std::move(options)),
      poll_timer_(io, clock),
      expiry_timer_(io, clock) {
  RedisClientOptions base;
  base.url = options_.url;
  base.ca_file = options_.ca_file;
  base.clock = &clock;
  RedisClientOptions commands = base;
  commands.name = "sidekiq redis";
  commands.reply_timeout = kReplyTimeout;
  commands_ = std::make_unique<RedisClient>(io, commands);
  std::vector<RedisClient*> blocking;
  for (const std::string& queue : options_.taker.queues) {
    RedisClientOptions o = base;
    o.name = "sidekiq redis (waiting on queue:" + queue + ")";
    // A BRPOPLPUSH answers within its own timeout: past that plus the usual bound, the
    // connection is taken for lost (a half-open socket).
    o.reply_timeout = kReplyTimeout + std::chrono::seconds(options_.taker.block_seconds);
    blocking_.push_back(std::make_unique<RedisClient>(io, o));
    blocking.push_back(blocking_.back().get());
  }
  taker_ = std::make_unique<SidekiqTaker>(io, clock, engine, *commands_, std::move(blocking),
                                          options_.taker, counters_);
  writer_ = std::make_unique<SidekiqOutcomeWriter>(engine, *commands_, clock, options_.outcomes,
                                                   counters_);
  liveness_ = std::make_unique<BridgeLiveness>(
      io, clock, *commands_, options_.liveness,
      BridgeLiveness::Handlers{
          .on_name = [this](bool held) { OnName(held); },
          .on_lapsed = [this] { taker_->Resync(); },
          .on_reaped = [this](std::vector<std::string> jobs,
                              std::vector<std::string>) { taker_->TakeBack(std::move(jobs)); },
          .on_reap_lost = [this] { taker_->Resync(); }});
  commands_->SetStateHandler(
      [this](RedisClientState state, const Status&) { OnCommandsState(state); });
  for (auto& client : blocking_) {
    client->SetStateHandler([this](RedisClientState, const Status&) { taker_->Poke(); });
  }
}

SidekiqBridge::~SidekiqBridge() {
  *alive_ = false;
  poll_timer_.Cancel();
  expiry_timer_.Cancel();
}

void SidekiqBridge::Start() {
  spdlog::info(
      "sidekiq bridge: taking from {} at {} as node {}; outcome jobs to queue:{}",
      [&] {
        std::string q;
        for (const auto& name : options_.taker.queues) q += (q.empty() ? "" : ", ") + name;
        return q;
      }(),
      options_.url.Redacted(), options_.taker.node, options_.outcomes.queue);
  commands_->Start();
  for (auto& client : blocking_) client->Start();
  liveness_->Start();
  Publish();
  SchedulePoll();
  ScheduleExpiry();
}

void SidekiqBridge::OnCommandsState(RedisClientState state) {
  if (state == RedisClientState::kAvailable) {
    // Taking needs the name: held already (back after a loss), or once the heartbeat claims it
    // (OnName). A heartbeat now also tells whether the name was lost meanwhile.
    liveness_->Beat();
    writer_->Resume();
    if (liveness_->name_held()) taker_->Resume();
  } else {
    taker_->Pause();
    writer_->Pause();
  }
  Publish();
}

void SidekiqBridge::OnName(bool held) {
  if (held) {
    taker_->Resync();  // the list may hold what an earlier process of this name left
    taker_->Resume();
  } else {
    taker_->Pause();
  }
  Publish();
}

void SidekiqBridge::Stop(std::chrono::milliseconds wait) {
  if (stopped_) return;
  stopped_ = true;
  poll_timer_.Cancel();
  expiry_timer_.Cancel();
  taker_->Pause();
  writer_->Pause();
  auto done = std::make_shared<bool>(false);
  liveness_->Stop([done] { *done = true; });
  auto deadline = std::chrono::steady_clock::now() + wait;
  while (!*done && std::chrono::steady_clock::now() < deadline) {
    if (io_.stopped()) io_.restart();
    io_.run_one_until(deadline);
  }
  for (auto& client : blocking_) client->Stop();
  commands_->Stop();
}

bool SidekiqBridge::up() const { return commands_->available() && liveness_->name_held(); }

std::string SidekiqBridge::down_reason() const {
  if (!commands_->available()) return commands_->unavailable_reason();
  if (!liveness_->name_held()) {
    return "the node name " + options_.taker.node + " is held by another process, or not yet " +
           "claimed (" + AliveKey(options_.taker.node) + ")";
  }
  return "";
}

BridgeSnapshot SidekiqBridge::Snapshot() const {
  BridgeSnapshot s;
  s.now = clock_.Now();
  s.up = up();
  s.reason = down_reason();
  s.node = options_.taker.node;
  s.redis = options_.url.Redacted();
  s.outcomes_queue = options_.outcomes.queue;
  s.queues = queues_;
  s.polled_at = polled_at_;
  s.in_progress = list_length_ >= 0 ? list_length_ : static_cast<int64_t>(taker_->held());
  s.taken = counters_.taken;
  s.repeats = counters_.repeats;
  s.dead = counters_.dead;
  s.reaped = counters_.reaped;
  s.outcomes_written = counters_.outcomes_written;
  return s;
}

void SidekiqBridge::SchedulePoll() {
  poll_timer_.ExpiresAfter(options_.poll_every);
  auto alive = std::weak_ptr<bool>(alive_);
  poll_timer_.AsyncWait([this, alive](boost::system::error_code ec) {
    if (ec || !alive.lock() || stopped_) return;
    Poll();
    Publish();  // also while down: the figures say so, and stay fresh
    SchedulePoll();
  });
}

void SidekiqBridge::ScheduleExpiry() {
  expiry_timer_.ExpiresAfter(kExpireEvery);
  auto alive = std::weak_ptr<bool>(alive_);
  expiry_timer_.AsyncWait([this, alive](boost::system::error_code ec) {
    if (ec || !alive.lock() || stopped_) return;
    engine_.store().taken_marks().Expire(clock_.Now(), kExpireAtOnce, [](Result<size_t> n) {
      if (n.ok() && *n > 0) spdlog::info("sidekiq bridge: {} expired taken mark(s) deleted", *n);
    });
    ScheduleExpiry();
  });
}

// The queues' sizes and Sidekiq's latency, and this node's list: pipelined reads, one answer.
void SidekiqBridge::Poll() {
  if (polling_ || !commands_->available()) return;
  polling_ = true;
  struct Reads {
    std::vector<SidekiqQueueFigures> queues;
    int64_t list = 0;
    size_t left = 0;
    bool failed = false;
  };
  auto reads = std::make_shared<Reads>();
  const auto& names = options_.taker.queues;
  reads->queues.resize(names.size());
  reads->left = 2 * names.size() + 1;
  auto alive = std::weak_ptr<bool>(alive_);
  auto finish = [this, alive, reads] {
    if (--reads->left > 0 || !alive.lock()) return;
    polling_ = false;
    if (reads->failed) return;
    queues_ = std::move(reads->queues);
    list_length_ = reads->list;
    polled_at_ = clock_.Now();
  };
  for (size_t i = 0; i < names.size(); ++i) {
    reads->queues[i].name = names[i];
    commands_->Send({"LLEN", "queue:" + names[i]}, [reads, i, finish](Result<RedisReply> r) {
      if (r.ok() && r->is_integer()) reads->queues[i].size = r->integer();
      reads->failed |= !r.ok();
      finish();
    });
    commands_->Send({"LINDEX", "queue:" + names[i], "-1"},
                    [this, reads, i, finish](Result<RedisReply> r) {
                      if (r.ok()) reads->queues[i].latency_seconds = LatencyOf(*r, clock_.Now());
                      reads->failed |= !r.ok();
                      finish();
                    });
  }
  commands_->Send({"LLEN", TakingKey(options_.taker.node)}, [reads, finish](Result<RedisReply> r) {
    if (r.ok() && r->is_integer()) reads->list = r->integer();
    reads->failed |= !r.ok();
    finish();
  });
}

}  // namespace bulkhead
