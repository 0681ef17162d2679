// The address checks of an attempt: the URL's scheme and host are checked by SsrfGuard before
// libcurl sees them, a name is resolved off the loop (bounded by the connect deadline) and every
// address it resolves to must pass, and each socket libcurl opens is checked once more.
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bulkhead/transport/curl_error.h"
#include "bulkhead/transport/curl_transport_impl.h"

namespace bulkhead {

using std::chrono::milliseconds;

void CurlTransport::Impl::StartAttempt(Exchange* x) {
  Result<UrlParts> url = ParseUrl(x->request.url);
  if (!url.ok()) {
    CompleteSoon(x->id, x->attempt, ErrorResponse(TransportError::kOther, url.status().message()));
    return;
  }
  if (Status s = guard_.CheckScheme(url->scheme); !s.ok()) {
    CompleteSoon(x->id, x->attempt, ErrorResponse(TransportError::kSsrfRefused, s.message()));
    return;
  }
  if (std::optional<IpAddress> literal = IpAddress::Parse(url->host)) {
    if (Status s = guard_.CheckAddress(*literal); !s.ok()) {
      CompleteSoon(x->id, x->attempt, ErrorResponse(TransportError::kSsrfRefused, s.message()));
      return;
    }
    StartCurl(x, *url, {});
    return;
  }
  // A name: resolve off the loop, within the connect budget.
  x->resolving = true;
  milliseconds budget = x->request.deadlines.connect;
  if (budget.count() > 0) {
    x->phase_timer.expires_after(budget);
    x->phase_timer.async_wait([this, alive = Alive(), id = x->id, attempt = x->attempt,
                               host = url->host, budget](const boost::system::error_code& ec) {
      if (ec || alive.expired()) return;
      Exchange* x = Find(id, attempt);
      if (x == nullptr || !x->resolving) return;
      Complete(id,
               ErrorResponse(TransportError::kDns, "resolving '" + host +
                                                       "' took longer than the connect deadline (" +
                                                       std::to_string(budget.count()) + " ms)"));
    });
  }
  std::string host = url->host;
  resolver_.Resolve(std::move(host),
                    [this, alive = Alive(), id = x->id, attempt = x->attempt,
                     url = std::move(*url)](Result<std::vector<IpAddress>> addresses) {
                      if (alive.expired()) return;
                      OnResolved(id, attempt, url, std::move(addresses));
                    });
}

void CurlTransport::Impl::OnResolved(uint64_t id, int attempt, const UrlParts& url,
                                     Result<std::vector<IpAddress>> addresses) {
  Exchange* x = Find(id, attempt);
  if (x == nullptr || !x->resolving) return;
  x->resolving = false;
  x->phase_timer.cancel();
  if (!addresses.ok()) {
    Complete(id, ErrorResponse(TransportError::kDns, addresses.status().message()));
    return;
  }
  // Every address must pass: a name with one private address among public ones is refused, so
  // that a rebinding answer cannot slip through on a later connection attempt.
  for (const IpAddress& a : *addresses) {
    if (Status s = guard_.CheckAddress(a); !s.ok()) {
      Complete(id, ErrorResponse(
                       TransportError::kSsrfRefused,
                       "host '" + url.host + "' resolves to a refused address: " + s.message()));
      return;
    }
  }
  StartCurl(x, url, *addresses);
}

curl_socket_t CurlTransport::Impl::OnOpenSocket(void* clientp, curlsocktype purpose,
                                                curl_sockaddr* address) {
  auto* x = static_cast<Exchange*>(clientp);
  Impl* self = x->impl;
  if (purpose != CURLSOCKTYPE_IPCXN) return CURL_SOCKET_BAD;
  // Second line of defence behind CURLOPT_RESOLVE: whatever libcurl connects to is checked.
  std::optional<IpAddress> a = IpAddress::FromSockaddr(&address->addr);
  if (!a) {
    x->ssrf_refusal = "connection to a non-IP address family refused";
    return CURL_SOCKET_BAD;
  }
  if (Status s = self->guard_.CheckAddress(*a); !s.ok()) {
    x->ssrf_refusal = s.message();
    return CURL_SOCKET_BAD;
  }
  int fd = ::socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
  if (fd < 0) return CURL_SOCKET_BAD;
  auto s = std::make_shared<Socket>(self->io_);
  boost::system::error_code ec;
  s->descriptor.assign(fd, ec);
  if (ec) {
    ::close(fd);
    return CURL_SOCKET_BAD;
  }
  s->fd = fd;
  s->owner = x->hm;
  s->opened_by_us = true;
  self->sockets_[fd] = std::move(s);
  return fd;
}

}  // namespace bulkhead
