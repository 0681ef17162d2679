#include "bulkhead/engine/fetch_waiters.h"

#include <algorithm>
#include <boost/asio/post.hpp>

namespace bulkhead {

FetchWaiters::FetchWaiters(boost::asio::io_context& io, Clock& clock, FetchSource& source)
    : io_(io), clock_(clock), source_(source) {}

uint64_t FetchWaiters::Add(std::vector<std::string> queues, const std::string& wid,
                           std::chrono::milliseconds block, FetchCallback cb) {
  uint64_t ticket = next_ticket_++;
  waiters_.push_back(
      Waiter{ticket, std::move(queues), std::move(cb), clock_.Now() + block, nullptr, wid});
  auto it = std::prev(waiters_.end());
  index_[ticket] = it;
  if (it->queues.empty()) {
    Arm(*it);  // nothing to probe: it only waits
  } else {
    Probe(ticket);
  }
  return index_.contains(ticket) ? ticket : 0;
}

void FetchWaiters::Arm(Waiter& w) {
  if (w.timer) return;
  w.timer = std::make_unique<Timer>(io_, clock_);
  w.timer->ExpiresAfter(std::max<Duration>(w.deadline - clock_.Now(), Duration::zero()));
  w.timer->AsyncWait([this, ticket = w.ticket](boost::system::error_code ec) {
    if (!ec) OnBlockTimeout(ticket);
  });
}

void FetchWaiters::OnBlockTimeout(uint64_t ticket) {
  auto found = index_.find(ticket);
  if (found == index_.end()) return;
  if (found->second->probing) {
    found->second->expired = true;  // the probe's answer ends it
    return;
  }
  Complete(found->second, std::optional<std::string>());
}

void FetchWaiters::Probe(uint64_t ticket) {
  Waiter& w = *index_.at(ticket);
  w.probing = true;
  w.recheck = false;
  source_.TakeJob(w.queues, w.wid, alive_.Guard([this, ticket](Result<std::optional<JobRecord>> r) {
    OnProbe(ticket, std::move(r));
  }));
}

void FetchWaiters::OnProbe(uint64_t ticket, Result<std::optional<JobRecord>> r) {
  auto found = index_.find(ticket);
  if (found == index_.end()) {  // withdrawn (connection closed, or Stop) while probing
    if (r.ok() && r->has_value()) source_.ReturnJob(std::move(**r));
    return;
  }
  auto it = found->second;
  it->probing = false;
  if (!r.ok()) {
    Complete(it, r.status());
  } else if (r->has_value()) {
    if (!source_.AdmitJob(**r)) {  // expired and dropped: the same FETCH goes on, on a later turn
      Arm(*it);
      boost::asio::post(io_, alive_.Guard([this, ticket] {
        auto again = index_.find(ticket);
        if (again != index_.end() && !again->second->probing) Probe(ticket);
      }));
      return;
    }
    Complete(it, std::optional<std::string>(std::move((*r)->payload)));
  } else if (it->expired) {
    Complete(it, std::optional<std::string>());
  } else {
    Arm(*it);  // no job yet: it waits for one until its deadline
    if (it->recheck) Probe(ticket);
  }
}

void FetchWaiters::Cancel(uint64_t ticket) {
  auto found = index_.find(ticket);
  if (found == index_.end()) return;
  if (found->second->timer) found->second->timer->Cancel();
  waiters_.erase(found->second);
  index_.erase(found);
}

void FetchWaiters::Complete(WaiterList::iterator it, Result<std::optional<std::string>> result) {
  FetchCallback cb = std::move(it->cb);
  if (it->timer) it->timer->Cancel();
  index_.erase(it->ticket);
  waiters_.erase(it);
  cb(std::move(result));
}

void FetchWaiters::Wake(const std::string& queue, size_t count) {
  // Probes complete waiters (and run their callbacks) inline with an inline store: pick the
  // waiters first, then probe those still waiting.
  std::vector<uint64_t> wake;
  for (auto& w : waiters_) {
    if (count == 0) break;
    if (std::find(w.queues.begin(), w.queues.end(), queue) == w.queues.end()) continue;
    --count;
    if (w.probing) {
      w.recheck = true;  // its probe may have missed the new job
    } else {
      wake.push_back(w.ticket);
    }
  }
  for (uint64_t ticket : wake) {
    auto found = index_.find(ticket);
    if (found != index_.end() && !found->second->probing) Probe(ticket);
  }
}

std::vector<std::string> FetchWaiters::Queues() const {
  std::vector<std::string> queues;
  for (const auto& w : waiters_) queues.insert(queues.end(), w.queues.begin(), w.queues.end());
  return queues;
}

void FetchWaiters::AnswerAll() {
  while (!waiters_.empty()) Complete(waiters_.begin(), std::optional<std::string>());
}

}  // namespace bulkhead
