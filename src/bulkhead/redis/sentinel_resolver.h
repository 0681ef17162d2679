// SentinelResolver: finds the current primary of a redis-sentinel:// URL. It asks the URL's
// Sentinels in order `SENTINEL get-master-addr-by-name MASTERNAME`; the first that names an
// address whose server confirms `ROLE` = master (with the URL's AUTH) wins. Following a fail-over
// is the caller's job: call Resolve again when the primary's connection is lost or a command
// answers READONLY (RedisReply::IsErrorCode("READONLY")).
// Threading: not thread-safe; the io_context's thread. Callbacks run later, on the loop, and never
// once the resolver is destroyed.
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bulkhead/redis/redis_connection.h"
#include "bulkhead/redis/redis_url.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

class SentinelResolver {
 public:
  using Callback = std::function<void(Result<RedisEndpoint>)>;

  // `url` must be a redis-sentinel:// URL. Each step (connecting to a Sentinel or to the primary
  // it names, and each of their replies) is bounded by `step_timeout`.
  SentinelResolver(boost::asio::io_context& io, RedisUrl url,
                   std::chrono::milliseconds step_timeout = std::chrono::seconds(2));
  ~SentinelResolver();
  SentinelResolver(const SentinelResolver&) = delete;
  SentinelResolver& operator=(const SentinelResolver&) = delete;

  // `done` gets the primary's address, or Unavailable naming every Sentinel tried and why it gave
  // no usable primary ("127.0.0.1:26379: connection refused; 127.0.0.1:26380: names
  // 127.0.0.1:6380, which reports role slave"). One Resolve at a time: a second while one runs
  // gets FailedPrecondition.
  void Resolve(Callback done);

  const RedisUrl& url() const { return url_; }

 private:
  void TrySentinel(size_t index);
  void OnSentinelReply(size_t index, Result<RedisReply> reply);
  void CheckPrimary(size_t index, RedisEndpoint primary);
  // Records why Sentinel `index` gave no primary and moves on to the next one.
  void Next(size_t index, const std::string& why);
  void Finish(Result<RedisEndpoint> result);

  boost::asio::io_context& io_;
  const RedisUrl url_;
  const std::chrono::milliseconds step_timeout_;
  Callback done_;
  std::vector<std::string> failures_;
  std::unique_ptr<RedisConnection> sentinel_;
  std::unique_ptr<RedisConnection> primary_;
  // Set by the destructor for posted work that no connection owns.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace bulkhead
