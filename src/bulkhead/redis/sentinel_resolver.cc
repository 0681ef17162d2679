#include "bulkhead/redis/sentinel_resolver.h"

#include <boost/asio/post.hpp>
#include <charconv>

namespace bulkhead {

SentinelResolver::SentinelResolver(boost::asio::io_context& io, RedisUrl url,
                                   std::chrono::milliseconds step_timeout)
    : io_(io), url_(std::move(url)), step_timeout_(step_timeout) {}

SentinelResolver::~SentinelResolver() { *alive_ = false; }

void SentinelResolver::Resolve(Callback done) {
  if (done_ != nullptr || url_.scheme != RedisUrl::Scheme::kSentinel || url_.endpoints.empty()) {
    Status s =
        done_ != nullptr
            ? Status::FailedPrecondition("sentinel: a Resolve is already running")
            : Status::InvalidArgument("sentinel: not a redis-sentinel:// URL: " + url_.Redacted());
    boost::asio::post(io_, [alive = alive_, done = std::move(done), s] {
      if (*alive) done(s);
    });
    return;
  }
  done_ = std::move(done);
  failures_.clear();
  // Posted so that even a synchronous failure reaches `done` later.
  boost::asio::post(io_, [this, alive = alive_] {
    if (*alive) TrySentinel(0);
  });
}

void SentinelResolver::TrySentinel(size_t index) {
  if (index == url_.endpoints.size()) {
    std::string why;
    for (const std::string& f : failures_) why += (why.empty() ? "" : "; ") + f;
    Finish(Status::Unavailable("no Sentinel named a usable primary for '" + url_.master_name +
                               "': " + why));
    return;
  }
  RedisConnectOptions options;
  options.endpoint = url_.endpoints[index];
  options.connect_timeout = step_timeout_;
  options.reply_timeout = step_timeout_;
  sentinel_ = std::make_unique<RedisConnection>(io_, options);
  sentinel_->Connect([this, index](Status s) {
    if (!s.ok()) {
      Next(index, s.message());
      return;
    }
    sentinel_->Send({"SENTINEL", "get-master-addr-by-name", url_.master_name},
                    [this, index](Result<RedisReply> r) { OnSentinelReply(index, std::move(r)); });
  });
}

void SentinelResolver::OnSentinelReply(size_t index, Result<RedisReply> reply) {
  if (!reply.ok()) {
    Next(index, reply.status().message());
    return;
  }
  if (reply->is_nil()) {
    Next(index, "does not know master '" + url_.master_name + "'");
    return;
  }
  const auto& e = reply->elements();
  int port = 0;
  if (!reply->is_array() || e.size() != 2 || !e[1].is_string() ||
      std::from_chars(e[1].str().data(), e[1].str().data() + e[1].str().size(), port).ec !=
          std::errc() ||
      port <= 0 || port > 65535) {
    Next(index, "unexpected reply " + reply->ToString());
    return;
  }
  CheckPrimary(index, RedisEndpoint{e[0].str(), static_cast<uint16_t>(port)});
}

void SentinelResolver::CheckPrimary(size_t index, RedisEndpoint primary) {
  RedisConnectOptions options = RedisConnectOptions::ForUrl(url_, primary);
  options.db = 0;  // ROLE needs no SELECT
  options.connect_timeout = step_timeout_;
  options.reply_timeout = step_timeout_;
  primary_ = std::make_unique<RedisConnection>(io_, options);
  std::string named = "names " + primary.ToString();
  primary_->Connect([this, index, primary, named](Status s) {
    if (!s.ok()) {
      Next(index, named + ", which fails: " + s.message());
      return;
    }
    primary_->Send({"ROLE"}, [this, index, primary, named](Result<RedisReply> r) {
      if (!r.ok()) {
        Next(index, named + ", which fails: " + r.status().message());
        return;
      }
      if (!r->is_array() || r->elements().empty() || !r->elements()[0].Is("master")) {
        std::string role = r->is_array() && !r->elements().empty()
                               ? "role " + r->elements()[0].str()
                               : "ROLE " + r->ToString();
        Next(index, named + ", which reports " + role);
        return;
      }
      Finish(primary);
    });
  });
}

void SentinelResolver::Next(size_t index, const std::string& why) {
  std::string who = url_.endpoints[index].ToString();
  // Connection errors already start with "redis HOST:PORT: "; keep one name per entry.
  std::string prefix = "redis " + who + ": ";
  failures_.push_back(who + ": " + (why.rfind(prefix, 0) == 0 ? why.substr(prefix.size()) : why));
  // The connections may be in the middle of calling us: drop them on a later turn.
  boost::asio::post(io_, [this, alive = alive_, index] {
    if (*alive) TrySentinel(index + 1);
  });
}

void SentinelResolver::Finish(Result<RedisEndpoint> result) {
  Callback done = std::move(done_);
  done_ = nullptr;
  // The connections are not needed any more; their own callbacks may be on the stack, which
  // RedisConnection allows.
  sentinel_.reset();
  primary_.reset();
  done(std::move(result));
}

}  // namespace bulkhead
