#include "bulkhead/transport/curl_transport.h"

#include <curl/curl.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "bulkhead/transport/curl_error.h"
#include "bulkhead/transport/curl_transport_impl.h"

namespace bulkhead {

namespace asio = boost::asio;
using std::chrono::duration_cast;
using std::chrono::microseconds;
using std::chrono::milliseconds;

namespace {

void GlobalInitOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

}  // namespace

// ---- setup and teardown -------------------------------------------------------------------------

Status CurlTransport::Impl::Init() {
  GlobalInitOnce();
  CURLM* probe = curl_multi_init();
  if (probe == nullptr) return Status::Internal("curl_multi_init failed");
  curl_multi_cleanup(probe);
  return Status::Ok();
}

CurlTransport::Impl::~Impl() {
  // Callbacks run by Shutdown() may have started exchanges; they are cancelled too.
  do {
    Shutdown();
  } while (!exchanges_.empty());
  for (auto& [origin, hm] : multis_) CleanupMulti(hm.get());
  multis_.clear();
  boost::system::error_code ignored;
  for (auto& [fd, s] : sockets_) {
    s->closed = true;
    s->descriptor.cancel(ignored);
    s->descriptor.release();  // libcurl owns the descriptor; never close it here
  }
  sockets_.clear();
  for (CURL* e : spare_easy_) curl_easy_cleanup(e);
  spare_easy_.clear();
  for (auto& [origin, sessions] : tls_sessions_) curl_share_cleanup(sessions.share);
  tls_sessions_.clear();
  alive_.reset();
}

void CurlTransport::Impl::Shutdown() {
  shut_down_ = true;
  std::vector<uint64_t> ids;
  for (auto& [id, x] : exchanges_) ids.push_back(id);
  for (uint64_t id : ids) {
    Complete(id, ErrorResponse(TransportError::kCancelled, "transport shut down"));
  }
}

// ---- exchanges ----------------------------------------------------------------------------------

void CurlTransport::Impl::Send(HttpRequest request, DoneCallback done) {
  in_flight_.fetch_add(1);
  if (io_.get_executor().running_in_this_thread()) {
    StartExchange(std::move(request), std::move(done));
    return;
  }
  asio::post(
      io_, [this, alive = Alive(), request = std::move(request), done = std::move(done)]() mutable {
        if (alive.expired()) {
          done(ErrorResponse(TransportError::kCancelled, "transport shut down"));
          return;
        }
        StartExchange(std::move(request), std::move(done));
      });
}

void CurlTransport::Impl::StartExchange(HttpRequest request, DoneCallback done) {
  auto owned = std::make_unique<Exchange>(io_);
  Exchange* x = owned.get();
  x->impl = this;
  x->id = next_id_++;
  x->request = std::move(request);
  x->done = std::move(done);
  x->start = Clock::now();
  exchanges_.emplace(x->id, std::move(owned));
  if (shut_down_) {
    CompleteSoon(x->id, x->attempt,
                 ErrorResponse(TransportError::kCancelled, "transport shut down"));
    return;
  }
  milliseconds total = x->request.deadlines.total;
  if (total.count() <= 0) total = milliseconds(30'000);
  x->total_timer.expires_after(total);
  x->total_timer.async_wait(
      [this, alive = Alive(), id = x->id, total](const boost::system::error_code& ec) {
        if (ec || alive.expired() || exchanges_.count(id) == 0) return;
        Complete(id, ErrorResponse(TransportError::kTimeoutTotal,
                                   "no complete response within the total deadline of " +
                                       std::to_string(total.count()) + " ms"));
      });
  StartAttempt(x);
}

CurlTransport::Impl::Exchange* CurlTransport::Impl::Find(uint64_t id, int attempt) {
  auto it = exchanges_.find(id);
  if (it == exchanges_.end() || it->second->attempt != attempt) return nullptr;
  return it->second.get();
}

void CurlTransport::Impl::DetachCurl(Exchange* x) {
  HostMulti* hm = x->hm;
  x->hm = nullptr;
  if (x->easy != nullptr && hm != nullptr) curl_multi_remove_handle(hm->multi, x->easy);
  x->ReleaseCurl();
  if (hm != nullptr) {
    --hm->active;
    MaybeRetire(hm);
  }
}

void CurlTransport::Impl::Complete(uint64_t id, HttpResponse response) {
  auto it = exchanges_.find(id);
  if (it == exchanges_.end()) return;
  std::unique_ptr<Exchange> x = std::move(it->second);
  exchanges_.erase(it);
  DetachCurl(x.get());
  x->total_timer.cancel();
  x->phase_timer.cancel();
  if (response.timings.connect.count() == 0) response.timings.connect = x->response.timings.connect;
  if (response.timings.first_byte.count() == 0) {
    response.timings.first_byte = x->response.timings.first_byte;
  }
  if (response.remote_address.empty()) response.remote_address = x->response.remote_address;
  response.redirects_followed =
      std::max(response.redirects_followed, x->response.redirects_followed);
  response.timings.total = duration_cast<microseconds>(Clock::now() - x->start);
  DoneCallback done = std::move(x->done);
  x.reset();
  in_flight_.fetch_sub(1);
  if (done) done(std::move(response));
}

void CurlTransport::Impl::CompleteSoon(uint64_t id, int attempt, HttpResponse response) {
  asio::post(io_, [this, alive = Alive(), id, attempt, response = std::move(response)]() mutable {
    if (alive.expired() || Find(id, attempt) == nullptr) return;
    Complete(id, std::move(response));
  });
}

// ---- CurlTransport ------------------------------------------------------------------------------

Result<std::unique_ptr<CurlTransport>> CurlTransport::Create(asio::io_context& io,
                                                             TransportOptions options) {
  auto impl = std::make_unique<Impl>(io, std::move(options));
  if (Status s = impl->Init(); !s.ok()) return s;
  return std::unique_ptr<CurlTransport>(new CurlTransport(std::move(impl)));
}

CurlTransport::CurlTransport(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CurlTransport::~CurlTransport() = default;

void CurlTransport::Send(HttpRequest request, DoneCallback done) {
  impl_->Send(std::move(request), std::move(done));
}
size_t CurlTransport::InFlight() const { return impl_->InFlight(); }
void CurlTransport::Shutdown() { impl_->Shutdown(); }
size_t CurlTransport::OpenSockets() const { return impl_->OpenSockets(); }
size_t CurlTransport::ActiveOrigins() const { return impl_->ActiveOrigins(); }
size_t CurlTransport::TlsSessionOrigins() const { return impl_->TlsSessionOrigins(); }
size_t CurlTransport::TlsSessionScans() const { return impl_->TlsSessionScans(); }

}  // namespace bulkhead
