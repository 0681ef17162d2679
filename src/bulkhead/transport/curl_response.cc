// The response side of an attempt: libcurl's callbacks that record the connect and first-byte
// timings, the headers and the (capped) body, then the outcome of a finished transfer: a response,
// a redirect followed, or a failure mapped to its TransportError.
#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <string_view>
#include <utility>

#include "bulkhead/transport/curl_error.h"
#include "bulkhead/transport/curl_transport_impl.h"
#include "bulkhead/util/ascii.h"

namespace bulkhead {

using std::chrono::duration_cast;
using std::chrono::microseconds;
using std::chrono::milliseconds;

namespace {

constexpr int kMaxRedirects = 3;

}  // namespace

int CurlTransport::Impl::OnPrereq(void* clientp, char* primary_ip, char* local_ip, int primary_port,
                                  int local_port) {
  auto* x = static_cast<Exchange*>(clientp);
  x->connected = true;
  x->response.timings.connect = duration_cast<microseconds>(Clock::now() - x->start);
  if (primary_ip != nullptr) x->response.remote_address = primary_ip;
  // A request without a body is sent with its headers; one with a body once libcurl has handed
  // the last body byte to the connection (OnProgress).
  if (x->request.body.empty() || EqualsIgnoreCase(x->request.method, "HEAD")) {
    x->request_sent = true;
    x->impl->ArmFirstByteDeadline(x);
  }
  return CURL_PREREQFUNC_OK;
}

// The first-byte deadline runs from the request sent (Deadlines::first_byte): on an HTTP/2
// connection whose flow-control window is spent, a request's DATA may wait behind other streams'
// after its HEADERS went out, and that wait is the connection's, not the host's answer time.
// Counting it made attempts give up while the host was still reading the body, or had it and was
// about to answer (the request then arrived twice, or with its headers only).
int CurlTransport::Impl::OnProgress(void* clientp, curl_off_t, curl_off_t, curl_off_t ultotal,
                                    curl_off_t ulnow) {
  auto* x = static_cast<Exchange*>(clientp);
  if (!x->request_sent && ultotal > 0 && ulnow >= ultotal) {
    x->request_sent = true;
    x->impl->ArmFirstByteDeadline(x);
  }
  return 0;
}

void CurlTransport::Impl::ArmFirstByteDeadline(Exchange* x) {
  milliseconds first_byte = x->request.deadlines.first_byte;
  if (first_byte.count() <= 0 || x->got_first_byte) return;
  x->phase_timer.expires_after(first_byte);
  x->phase_timer.async_wait([this, alive = Alive(), id = x->id, attempt = x->attempt,
                             first_byte](const boost::system::error_code& ec) {
    if (ec || alive.expired()) return;
    Exchange* x = Find(id, attempt);
    if (x == nullptr || x->got_first_byte || x->easy == nullptr) return;
    Complete(id, ErrorResponse(TransportError::kTimeoutFirstByte,
                               "no response byte within the first-byte deadline of " +
                                   std::to_string(first_byte.count()) + " ms"));
  });
}

size_t CurlTransport::Impl::OnHeader(char* data, size_t size, size_t count, void* userp) {
  auto* x = static_cast<Exchange*>(userp);
  size_t n = size * count;
  if (!x->got_first_byte) {
    x->got_first_byte = true;
    x->response.timings.first_byte = duration_cast<microseconds>(Clock::now() - x->start);
    x->phase_timer.cancel();
  }
  std::string_view line(data, n);
  if (line.starts_with("HTTP/")) {
    x->response.headers.clear();  // a new response (after 1xx, or a new hop)
    return n;
  }
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return n;
  // The value loses the line's CRLF too.
  x->response.headers.push_back(
      HttpHeader{std::string(TrimAscii(line.substr(0, colon), " \t\r\n")),
                 std::string(TrimAscii(line.substr(colon + 1), " \t\r\n"))});
  return n;
}

size_t CurlTransport::Impl::OnWrite(char* data, size_t size, size_t count, void* userp) {
  auto* x = static_cast<Exchange*>(userp);
  const TransportOptions& o = x->impl->options_;
  size_t n = size * count;
  x->body_bytes_seen += n;
  std::string& body = x->response.body;
  if (body.size() < o.max_body_bytes) {
    body.append(data, std::min(n, o.max_body_bytes - body.size()));
  }
  if (x->body_bytes_seen > body.size()) x->response.body_truncated = true;
  if (x->body_bytes_seen > o.max_drain_bytes) {
    x->cut_for_size = true;
    return 0;  // makes libcurl end the transfer with CURLE_WRITE_ERROR
  }
  return n;
}

void CurlTransport::Impl::OnCurlDone(Exchange* x, CURLcode code) {
  CURL* e = x->easy;
  long status = 0;
  curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
  char* ip = nullptr;
  if (curl_easy_getinfo(e, CURLINFO_PRIMARY_IP, &ip) == CURLE_OK && ip != nullptr && *ip) {
    x->response.remote_address = ip;
  }
  if (code == CURLE_OK || (code == CURLE_WRITE_ERROR && x->cut_for_size)) {
    x->response.status = int(status);
    x->response.error = TransportError::kNone;
    x->response.error_message.clear();
    if (MaybeRedirect(x)) return;
    Complete(x->id, std::move(x->response));
    return;
  }
  HttpResponse failure = ClassifyFailure(x, code);
  failure.status = int(status);
  failure.remote_address = x->response.remote_address;
  failure.timings = x->response.timings;
  failure.redirects_followed = x->response.redirects_followed;
  Complete(x->id, std::move(failure));
}

HttpResponse CurlTransport::Impl::ClassifyFailure(Exchange* x, CURLcode code) {
  CurlFailure failure;
  failure.code = code;
  curl_easy_getinfo(x->easy, CURLINFO_OS_ERRNO, &failure.os_errno);
  failure.detail = x->errbuf[0] != '\0' ? std::string(x->errbuf) : curl_easy_strerror(code);
  failure.connected = x->connected;
  failure.ssrf_refusal = x->ssrf_refusal;
  return ClassifyCurlFailure(failure);
}

bool CurlTransport::Impl::MaybeRedirect(Exchange* x) {
  int status = x->response.status;
  bool is_redirect =
      status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
  if (!x->request.follow_redirects || !is_redirect) return false;
  char* location = nullptr;
  if (curl_easy_getinfo(x->easy, CURLINFO_REDIRECT_URL, &location) != CURLE_OK ||
      location == nullptr) {
    return false;
  }
  if (x->response.redirects_followed >= kMaxRedirects) {
    x->response.error = TransportError::kTooManyRedirects;
    x->response.error_message = "more than " + std::to_string(kMaxRedirects) + " redirects";
    return false;
  }
  std::string next = location;
  Result<UrlParts> from = ParseUrl(x->request.url);
  Result<UrlParts> to = ParseUrl(next);
  bool same_origin = from.ok() && to.ok() && SameOrigin(*from, *to);
  HttpRequest& r = x->request;
  r.url = next;
  if (status == 303 || ((status == 301 || status == 302) && EqualsIgnoreCase(r.method, "POST"))) {
    r.method = "GET";
    r.body.clear();
  }
  if (!same_origin) {
    std::erase_if(r.headers, [](const HttpHeader& h) {
      return EqualsIgnoreCase(h.name, "Authorization") || EqualsIgnoreCase(h.name, "Cookie");
    });
  }
  int followed = x->response.redirects_followed + 1;
  HttpTimings timings = x->response.timings;
  DetachCurl(x);
  x->phase_timer.cancel();
  ++x->attempt;
  x->response = HttpResponse();
  x->response.redirects_followed = followed;
  x->response.timings = timings;
  StartAttempt(x);
  return true;
}

}  // namespace bulkhead
