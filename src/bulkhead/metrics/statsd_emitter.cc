#include "bulkhead/metrics/statsd_emitter.h"

#include <fcntl.h>
#include <netdb.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "bulkhead/metrics/metric_names.h"

namespace bulkhead {

namespace {

// Splits "host:port" / "[v6]:port". InvalidArgument if malformed or the port is not 1..65535.
// (config.h has its own ParseHostPort for the server's listen addresses; metrics stays
// independent of the config module.)
Result<std::pair<std::string, uint16_t>> SplitHostPort(std::string_view address) {
  std::string_view host;
  std::string_view port;
  if (address.starts_with('[')) {
    size_t close = address.find(']');
    if (close == std::string_view::npos || close + 1 >= address.size() ||
        address[close + 1] != ':') {
      return Status::InvalidArgument("address \"" + std::string(address) +
                                     "\" must look like [v6addr]:port");
    }
    host = address.substr(1, close - 1);
    port = address.substr(close + 2);
  } else {
    size_t colon = address.rfind(':');
    if (colon == std::string_view::npos || address.find(':') != colon) {
      return Status::InvalidArgument("address \"" + std::string(address) +
                                     "\" must look like host:port");
    }
    host = address.substr(0, colon);
    port = address.substr(colon + 1);
  }
  unsigned value = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (host.empty() || port.empty() || ec != std::errc() || end != port.data() + port.size() ||
      value < 1 || value > 65535) {
    return Status::InvalidArgument("address \"" + std::string(address) +
                                   "\" needs a host and a port 1..65535");
  }
  return std::make_pair(std::string(host), static_cast<uint16_t>(value));
}

}  // namespace

Status ValidateStatsdConfig(const StatsdConfig& config) {
  if (auto hp = SplitHostPort(config.address); !hp.ok()) {
    return Status::InvalidArgument("[statsd] address: " + hp.status().message());
  }
  if (config.interval < std::chrono::milliseconds(1)) {
    return Status::InvalidArgument("[statsd] interval must be positive");
  }
  if (!config.tags.empty() && config.flavor != StatsdFlavor::kDogStatsd) {
    return Status::InvalidArgument(
        "[statsd] tags need flavor = \"dogstatsd\" (plain StatsD has no tags)");
  }
  for (const auto& [k, v] : config.tags) {
    std::string tag = v.empty() ? k : k + ":" + v;
    if (auto t = ParseStatsdTag(tag); !t.ok()) {
      return Status::InvalidArgument("[statsd] tags: " + t.status().message());
    }
  }
  if (config.max_datagram_bytes < 64) {
    return Status::InvalidArgument("[statsd] max_datagram_bytes must be at least 64");
  }
  return Status::Ok();
}

StatsdEmitter::StatsdEmitter(Registry& registry, StatsdConfig config)
    : registry_(registry), config_(std::move(config)) {
  // Registration only fails on a conflicting definition of these names: then the figures are
  // still in stats() and logged, just not exported.
  auto sent = registry_.AddCounter(metric_names::kStatsdDatagramsSentTotal,
                                   metric_names::kStatsdDatagramsSentTotalHelp);
  auto dropped = registry_.AddCounter(metric_names::kStatsdDatagramsDroppedTotal,
                                      metric_names::kStatsdDatagramsDroppedTotalHelp);
  if (sent.ok()) sent_counter_ = &(*sent)->Get();
  if (dropped.ok()) dropped_counter_ = &(*dropped)->Get();
}

StatsdEmitter::~StatsdEmitter() {
  Stop();
  if (fd_ >= 0) close(fd_);
}

Status StatsdEmitter::Open() {
  std::lock_guard<std::mutex> lock(emit_mu_);
  if (fd_ >= 0) return Status::Ok();
  if (Status s = ValidateStatsdConfig(config_); !s.ok()) return s;
  auto hp = SplitHostPort(config_.address);

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* res = nullptr;
  std::string port = std::to_string(hp->second);
  int rc = getaddrinfo(hp->first.c_str(), port.c_str(), &hints, &res);
  if (rc != 0 || res == nullptr) {
    return Status::Unavailable("[statsd] address " + config_.address +
                               ": cannot resolve: " + gai_strerror(rc));
  }
  std::string last_error = "no usable address";
  for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      last_error = std::strerror(errno);
      continue;
    }
    // connect() on UDP only fixes the peer: later sends need no address, and an ICMP "port
    // unreachable" surfaces as ECONNREFUSED on a later send (counted as a drop).
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
      last_error = std::strerror(errno);
      close(fd);
      continue;
    }
    fd_ = fd;
    break;
  }
  freeaddrinfo(res);
  if (fd_ < 0) {
    return Status::Unavailable("[statsd] address " + config_.address + ": " + last_error);
  }
  formatter_ = std::make_unique<StatsdFormatter>(config_.flavor, config_.prefix, config_.tags);
  return Status::Ok();
}

Status StatsdEmitter::Start() {
  if (thread_.joinable()) return Status::FailedPrecondition("statsd emitter already started");
  if (Status s = Open(); !s.ok()) return s;
  {
    std::lock_guard<std::mutex> lock(run_mu_);
    stopping_ = false;
  }
  thread_ = std::thread([this] { Run(); });
  return Status::Ok();
}

void StatsdEmitter::Stop() {
  {
    std::lock_guard<std::mutex> lock(run_mu_);
    stopping_ = true;
  }
  run_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void StatsdEmitter::Run() {
  auto next = std::chrono::steady_clock::now() + config_.interval;
  std::unique_lock<std::mutex> lock(run_mu_);
  while (!stopping_) {
    if (run_cv_.wait_until(lock, next, [this] { return stopping_; })) break;
    lock.unlock();
    Status s = EmitOnce();
    if (!s.ok()) spdlog::warn("statsd: emission failed: {}", s.ToString());
    lock.lock();
    // Fixed rate without catch-up bursts: if an emission overran, start from now.
    next += config_.interval;
    auto now = std::chrono::steady_clock::now();
    if (next < now) next = now + config_.interval;
  }
}

Status StatsdEmitter::EmitOnce() {
  // Collect outside emit_mu_? No: the formatter's counter deltas must follow collection order, so
  // collection and formatting are one critical section. Callbacks must be quick (registry.h).
  std::lock_guard<std::mutex> lock(emit_mu_);
  if (fd_ < 0) return Status::FailedPrecondition("statsd emitter not open");
  std::vector<std::string> lines = formatter_->Format(registry_.Collect());
  uint64_t sent = 0;
  uint64_t dropped = 0;
  for (const std::string& datagram : PackDatagrams(lines, config_.max_datagram_bytes)) {
    ssize_t n = send(fd_, datagram.data(), datagram.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n == static_cast<ssize_t>(datagram.size())) {
      ++sent;
    } else {
      ++dropped;  // EAGAIN, ECONNREFUSED, ENETUNREACH, EMSGSIZE...: never wait, never retry
    }
  }
  emissions_.fetch_add(1, std::memory_order_relaxed);
  sent_.fetch_add(sent, std::memory_order_relaxed);
  dropped_.fetch_add(dropped, std::memory_order_relaxed);
  if (sent_counter_ != nullptr) sent_counter_->Increment(static_cast<double>(sent));
  if (dropped_counter_ != nullptr) dropped_counter_->Increment(static_cast<double>(dropped));
  return Status::Ok();
}

StatsdEmitter::Stats StatsdEmitter::stats() const {
  Stats s;
  s.emissions = emissions_.load(std::memory_order_relaxed);
  s.datagrams_sent = sent_.load(std::memory_order_relaxed);
  s.datagrams_dropped = dropped_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace bulkhead
