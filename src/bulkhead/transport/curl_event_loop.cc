// Libcurl's side of the loop: one multi handle per origin, each socket libcurl wants watched as an
// asio descriptor, each multi's timer as an asio steady_timer, and the finished transfers handed
// back to the exchanges.
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bulkhead/transport/curl_transport_impl.h"

namespace bulkhead {

namespace asio = boost::asio;
using std::chrono::milliseconds;

Result<CurlTransport::Impl::HostMulti*> CurlTransport::Impl::MultiFor(const UrlParts& url) {
  std::string origin = OriginKey(url);
  auto it = multis_.find(origin);
  if (it != multis_.end()) {
    it->second->idle_timer.cancel();
    return it->second.get();
  }
  auto hm = std::make_unique<HostMulti>(io_);
  hm->impl = this;
  hm->origin = origin;
  hm->multi = curl_multi_init();
  if (hm->multi == nullptr) return Status::ResourceExhausted("curl_multi_init failed");
  CURLM* m = hm->multi;
  curl_multi_setopt(m, CURLMOPT_SOCKETFUNCTION, &Impl::OnSocket);
  curl_multi_setopt(m, CURLMOPT_SOCKETDATA, hm.get());
  curl_multi_setopt(m, CURLMOPT_TIMERFUNCTION, &Impl::OnTimer);
  curl_multi_setopt(m, CURLMOPT_TIMERDATA, hm.get());
  curl_multi_setopt(m, CURLMOPT_PIPELINING, long{CURLPIPE_MULTIPLEX});
  curl_multi_setopt(m, CURLMOPT_MAX_HOST_CONNECTIONS, options_.max_connections_per_host);
  curl_multi_setopt(m, CURLMOPT_MAX_CONCURRENT_STREAMS, options_.max_concurrent_streams);
  HostMulti* raw = hm.get();
  multis_.emplace(origin, std::move(hm));
  return raw;
}

// An origin nobody has used for a while gives back its idle connections and its multi.
void CurlTransport::Impl::MaybeRetire(HostMulti* hm) {
  if (hm->active > 0) return;
  hm->idle_timer.expires_after(options_.idle_origin_timeout);
  hm->idle_timer.async_wait(
      [this, alive = Alive(), origin = hm->origin](const boost::system::error_code& ec) {
        if (ec || alive.expired()) return;
        auto it = multis_.find(origin);
        if (it == multis_.end() || it->second->active > 0) return;
        std::unique_ptr<HostMulti> owned = std::move(it->second);
        multis_.erase(it);
        CleanupMulti(owned.get());
      });
}

void CurlTransport::Impl::CleanupMulti(HostMulti* hm) {
  if (hm->multi != nullptr) curl_multi_cleanup(hm->multi);  // closes via OnCloseSocket
  hm->multi = nullptr;
  hm->timer.cancel();
  hm->idle_timer.cancel();
  // Sockets libcurl did not close through us (none expected) stop being watched.
  std::vector<curl_socket_t> left;
  for (auto& [fd, s] : sockets_) {
    if (s->owner == hm) left.push_back(fd);
  }
  for (curl_socket_t fd : left) ForgetSocket(fd);
}

int CurlTransport::Impl::OnCloseSocket(void* clientp, curl_socket_t fd) {
  auto* self = static_cast<Impl*>(clientp);
  self->ForgetSocket(fd);
  return ::close(fd);
}

int CurlTransport::Impl::OnSocket(CURL* easy, curl_socket_t fd, int what, void* userp,
                                  void* socketp) {
  auto* hm = static_cast<HostMulti*>(userp);
  Impl* self = hm->impl;
  auto it = self->sockets_.find(fd);
  if (what == CURL_POLL_REMOVE) {
    if (it == self->sockets_.end()) return 0;
    it->second->wanted = 0;
    // A socket we did not open gets no close callback: stop watching it now.
    if (!it->second->opened_by_us) self->ForgetSocket(fd);
    return 0;
  }
  std::shared_ptr<Socket> s;
  if (it != self->sockets_.end()) {
    s = it->second;
  } else {
    s = std::make_shared<Socket>(self->io_);
    boost::system::error_code ec;
    s->descriptor.assign(fd, ec);
    if (ec) return -1;
    s->fd = fd;
    self->sockets_[fd] = s;
  }
  s->owner = hm;
  s->wanted = what & (CURL_POLL_IN | CURL_POLL_OUT);
  self->WatchSocket(s);
  return 0;
}

int CurlTransport::Impl::OnTimer(CURLM* multi, long timeout_ms, void* userp) {
  auto* hm = static_cast<HostMulti*>(userp);
  Impl* self = hm->impl;
  if (timeout_ms < 0) {
    hm->timer.cancel();
    return 0;
  }
  if (timeout_ms == 0) {
    // "Now": a posted action, once per turn, rather than a timer re-armed per request (each
    // re-arm of the loop's earliest timer is a timerfd_settime system call). The timer keeps
    // whatever later expiry libcurl asked for before; libcurl sets it again after this action.
    if (hm->run_now_posted) return 0;
    hm->run_now_posted = true;
    asio::post(self->io_, [self, hm, alive = self->Alive(), origin = hm->origin] {
      if (alive.expired()) return;
      auto it = self->multis_.find(origin);
      if (it == self->multis_.end() || it->second.get() != hm) return;
      hm->run_now_posted = false;
      self->SocketAction(hm, CURL_SOCKET_TIMEOUT, 0);
    });
    return 0;
  }
  hm->timer.expires_after(milliseconds(timeout_ms));
  hm->timer.async_wait(
      [self, hm, alive = self->Alive(), origin = hm->origin](const boost::system::error_code& ec) {
        if (ec || alive.expired()) return;
        auto it = self->multis_.find(origin);
        if (it == self->multis_.end() || it->second.get() != hm) return;
        self->SocketAction(hm, CURL_SOCKET_TIMEOUT, 0);
      });
  return 0;
}

void CurlTransport::Impl::WatchSocket(const std::shared_ptr<Socket>& s) {
  if (s->closed) return;
  if ((s->wanted & CURL_POLL_IN) && !s->read_outstanding) {
    s->read_outstanding = true;
    s->descriptor.async_wait(asio::posix::stream_descriptor::wait_read,
                             [this, alive = Alive(), s](const boost::system::error_code& ec) {
                               if (alive.expired()) return;
                               OnSocketReady(s, CURL_POLL_IN, ec);
                             });
  }
  if ((s->wanted & CURL_POLL_OUT) && !s->write_outstanding) {
    s->write_outstanding = true;
    s->descriptor.async_wait(asio::posix::stream_descriptor::wait_write,
                             [this, alive = Alive(), s](const boost::system::error_code& ec) {
                               if (alive.expired()) return;
                               OnSocketReady(s, CURL_POLL_OUT, ec);
                             });
  }
}

void CurlTransport::Impl::OnSocketReady(const std::shared_ptr<Socket>& s, int direction,
                                        const boost::system::error_code& ec) {
  if (direction == CURL_POLL_IN) {
    s->read_outstanding = false;
  } else {
    s->write_outstanding = false;
  }
  if (s->closed || ec == asio::error::operation_aborted) return;
  if (s->wanted & direction) {
    int events =
        ec ? CURL_CSELECT_ERR : (direction == CURL_POLL_IN ? CURL_CSELECT_IN : CURL_CSELECT_OUT);
    SocketAction(s->owner, s->fd, events);
  }
  WatchSocket(s);
}

void CurlTransport::Impl::ForgetSocket(curl_socket_t fd) {
  auto it = sockets_.find(fd);
  if (it == sockets_.end()) return;
  std::shared_ptr<Socket> s = std::move(it->second);
  sockets_.erase(it);
  s->closed = true;
  s->wanted = 0;
  boost::system::error_code ignored;
  s->descriptor.cancel(ignored);
  s->descriptor.release();  // deregisters from the reactor; the caller closes the fd
}

void CurlTransport::Impl::SocketAction(HostMulti* hm, curl_socket_t fd, int events) {
  if (hm == nullptr || hm->multi == nullptr) return;
  int running = 0;
  curl_multi_socket_action(hm->multi, fd, events, &running);
  DrainMessages(hm);
}

void CurlTransport::Impl::DrainMessages(HostMulti* hm) {
  // Collect first: callbacks run from here may start or end other exchanges.
  std::vector<std::pair<uint64_t, CURLcode>> finished;
  int queued = 0;
  while (CURLMsg* msg = curl_multi_info_read(hm->multi, &queued)) {
    if (msg->msg != CURLMSG_DONE) continue;
    Exchange* x = nullptr;
    curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &x);
    if (x != nullptr) finished.emplace_back(x->id, msg->data.result);
  }
  for (auto [id, code] : finished) {
    auto it = exchanges_.find(id);
    if (it == exchanges_.end() || it->second->easy == nullptr) continue;
    OnCurlDone(it->second.get(), code);
  }
}

}  // namespace bulkhead
