#include "bulkhead/transport/host_resolver.h"

#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <boost/asio/post.hpp>

namespace bulkhead {

HostResolver::HostResolver(boost::asio::any_io_executor executor, HostResolverOptions options)
    : executor_(std::move(executor)), options_(options) {}

HostResolver::~HostResolver() {
  std::vector<std::thread> workers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    workers.swap(workers_);
  }
  cv_.notify_all();
  for (std::thread& t : workers) t.join();
}

void HostResolver::Resolve(std::string host, Callback done) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) {
    boost::asio::post(
        executor_, [done = std::move(done)] { done(Status::Unavailable("resolver shut down")); });
    return;
  }
  auto cached = cache_.find(host);
  if (cached != cache_.end()) {
    if (cached->second.expires > std::chrono::steady_clock::now()) {
      boost::asio::post(executor_,
                        [done = std::move(done), a = cached->second.addresses] { done(a); });
      return;
    }
    cache_.erase(cached);
  }
  std::vector<Callback>& waiters = waiting_[host];
  waiters.push_back(std::move(done));
  if (waiters.size() > 1) return;  // a lookup of this name is queued or running already
  queue_.push_back(std::move(host));
  if (idle_ == 0 && workers_.size() < std::max<size_t>(options_.threads, 1)) {
    workers_.emplace_back([this] { WorkerLoop(); });
  }
  cv_.notify_one();
}

void HostResolver::WorkerLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    ++idle_;
    cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    --idle_;
    if (stopping_) return;
    std::string host = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    Result<std::vector<IpAddress>> result = LookUp(host);
    lock.lock();
    if (stopping_) return;
    if (result.ok() && options_.cache_ttl.count() > 0) {
      cache_[host] = CacheEntry{*result, std::chrono::steady_clock::now() + options_.cache_ttl};
    }
    auto it = waiting_.find(host);
    if (it == waiting_.end()) continue;
    std::vector<Callback> waiters = std::move(it->second);
    waiting_.erase(it);
    for (Callback& cb : waiters) {
      boost::asio::post(executor_, [cb = std::move(cb), result] { cb(result); });
    }
  }
}

Result<std::vector<IpAddress>> HostResolver::LookUp(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_ADDRCONFIG;
  addrinfo* list = nullptr;
  // "example.com." is the same name; some resolvers (and /etc/hosts) only know it without the dot.
  std::string name = host.size() > 1 && host.back() == '.' ? host.substr(0, host.size() - 1) : host;
  int rc = getaddrinfo(name.c_str(), nullptr, &hints, &list);
  if (rc != 0) {
    std::string message = "cannot resolve '" + host + "': " + gai_strerror(rc);
    if (rc == EAI_AGAIN) return Status::Unavailable(message);
    return Status::NotFound(message);
  }
  std::vector<IpAddress> addresses;
  for (addrinfo* ai = list; ai != nullptr; ai = ai->ai_next) {
    std::optional<IpAddress> a = IpAddress::FromSockaddr(ai->ai_addr);
    if (a && std::find(addresses.begin(), addresses.end(), *a) == addresses.end()) {
      addresses.push_back(*a);
    }
  }
  freeaddrinfo(list);
  if (addresses.empty()) return Status::NotFound("'" + host + "' has no address");
  return addresses;
}

}  // namespace bulkhead
