// One attempt's easy handle: the options every exchange gets, its deadlines, the callbacks bound
// to it, the checked addresses it is pinned to, its method, body and headers, and its multi.
#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "bulkhead/transport/curl_error.h"
#include "bulkhead/transport/curl_transport_impl.h"
#include "bulkhead/util/ascii.h"

namespace bulkhead {

using std::chrono::duration_cast;
using std::chrono::milliseconds;

namespace {

// The total deadline is the exchange's own timer (it covers resolution and waiting for a
// connection slot); libcurl's is a backstop slightly later. `start` is when the exchange began.
void SetDeadlines(CURL* e, const Deadlines& d, std::chrono::steady_clock::time_point start) {
  if (d.connect.count() > 0)
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, long(d.connect.count()));
  auto elapsed = duration_cast<milliseconds>(std::chrono::steady_clock::now() - start);
  long remaining = std::max<long>(1, long((d.total - elapsed).count()));
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, remaining + 50);
  if (d.low_speed_limit > 0 && d.low_speed_time.count() > 0) {
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, long(d.low_speed_limit));
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, long(d.low_speed_time.count()));
  }
}

// Pins url.host to the addresses that were checked. Returns the list libcurl reads (the caller
// frees it after the transfer), or nullptr when `pinned` is empty.
curl_slist* PinAddresses(CURL* e, const UrlParts& url, const std::vector<IpAddress>& pinned) {
  if (pinned.empty()) return nullptr;
  std::string entry = url.host + ":" + std::to_string(url.port) + ":";
  for (size_t i = 0; i < pinned.size(); ++i) {
    if (i > 0) entry += ",";
    entry += pinned[i].ToUriString();
  }
  curl_slist* resolve_list = curl_slist_append(nullptr, entry.c_str());
  curl_easy_setopt(e, CURLOPT_RESOLVE, resolve_list);
  return resolve_list;
}

// Method, body and headers. Returns the header list libcurl reads (the caller frees it after the
// transfer). `r` must outlive the transfer (libcurl reads the body from it).
curl_slist* SetMethodAndHeaders(CURL* e, const HttpRequest& r) {
  const std::string& m = r.method;
  if (EqualsIgnoreCase(m, "HEAD")) {
    curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
  } else if (EqualsIgnoreCase(m, "POST") || !r.body.empty()) {
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(r.body.size()));
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, r.body.data());
    if (!EqualsIgnoreCase(m, "POST")) curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, m.c_str());
  } else if (!EqualsIgnoreCase(m, "GET")) {
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, m.c_str());
  }
  curl_slist* headers = curl_slist_append(nullptr, "Expect:");
  for (const HttpHeader& h : r.headers) {
    std::string line = h.name + (h.value.empty() ? ";" : ": " + h.value);
    headers = curl_slist_append(headers, line.c_str());
  }
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
  return headers;
}

}  // namespace

void CurlTransport::Impl::StartCurl(Exchange* x, const UrlParts& url,
                                    const std::vector<IpAddress>& pinned) {
  CURL* e = NewEasy();
  if (e == nullptr) {
    CompleteSoon(x->id, x->attempt, ErrorResponse(TransportError::kOther, "curl_easy_init failed"));
    return;
  }
  x->easy = e;
  x->connected = false;
  x->got_first_byte = false;
  x->request_sent = false;
  x->cut_for_size = false;
  x->body_bytes_seen = 0;
  x->ssrf_refusal.clear();
  x->errbuf[0] = '\0';
  SetBaseOptions(e, x, url);
  SetDeadlines(e, x->request.deadlines, x->start);
  SetCallbacks(e, x);
  x->resolve_list = PinAddresses(e, url, pinned);
  x->header_list = SetMethodAndHeaders(e, x->request);
  AttachToMulti(x, url);
}

void CurlTransport::Impl::SetBaseOptions(CURL* e, Exchange* x, const UrlParts& url) {
  curl_easy_setopt(e, CURLOPT_URL, x->request.url.c_str());
  curl_easy_setopt(e, CURLOPT_PRIVATE, x);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, guard_.CurlProtocols());
  curl_easy_setopt(e, CURLOPT_PROXY, "");  // never take a proxy from the environment
  curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
  if (!x->request.http2) {
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, long{CURL_HTTP_VERSION_1_1});
  } else {
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, long{CURL_HTTP_VERSION_2TLS});
  }
  if (x->request.http2 && EqualsIgnoreCase(url.scheme, "https")) {
    // Wait for a connection that may multiplex rather than open another one to the same host.
    curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
  }
  curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
  if (!options_.ca_file.empty()) {
    curl_easy_setopt(e, CURLOPT_CAINFO, options_.ca_file.c_str());
  }
  curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
  if (EqualsIgnoreCase(url.scheme, "https")) {
    // The origin's TLS sessions (curl_tls_sessions.cc): a new connection resumes an earlier one's.
    if (CURLSH* share = TlsSessionsFor(OriginKey(url))) curl_easy_setopt(e, CURLOPT_SHARE, share);
  }
  if (const auto& cert = x->request.client_certificate) {
    // libcurl copies the blobs; connections are reused only by requests with the same ones.
    curl_blob c{const_cast<char*>(cert->cert_pem.data()), cert->cert_pem.size(), CURL_BLOB_COPY};
    curl_blob k{const_cast<char*>(cert->key_pem.data()), cert->key_pem.size(), CURL_BLOB_COPY};
    curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
    curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &c);
    curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
    curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &k);
  }
}

// Sockets are opened and closed by us so that each is checked and registered with the loop.
void CurlTransport::Impl::SetCallbacks(CURL* e, Exchange* x) {
  curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, &Impl::OnOpenSocket);
  curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, x);
  curl_easy_setopt(e, CURLOPT_CLOSESOCKETFUNCTION, &Impl::OnCloseSocket);
  curl_easy_setopt(e, CURLOPT_CLOSESOCKETDATA, this);
  curl_easy_setopt(e, CURLOPT_PREREQFUNCTION, &Impl::OnPrereq);
  curl_easy_setopt(e, CURLOPT_PREREQDATA, x);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &Impl::OnHeader);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &Impl::OnWrite);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
  if (!x->request.body.empty() && x->request.deadlines.first_byte.count() > 0) {
    // Tells when the body has been sent, where the first-byte deadline starts (OnProgress).
    curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, &Impl::OnProgress);
    curl_easy_setopt(e, CURLOPT_XFERINFODATA, x);
    curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
  }
}

void CurlTransport::Impl::AttachToMulti(Exchange* x, const UrlParts& url) {
  CURL* e = x->easy;
  Result<HostMulti*> hm = MultiFor(url);
  if (!hm.ok()) {
    x->ReleaseCurl();
    CompleteSoon(x->id, x->attempt, ErrorResponse(TransportError::kOther, hm.status().message()));
    return;
  }
  CURLMcode rc = curl_multi_add_handle((*hm)->multi, e);
  if (rc == CURLM_OK) {
    x->hm = *hm;
    ++x->hm->active;
  } else {
    x->ReleaseCurl();
    MaybeRetire(*hm);
    CompleteSoon(x->id, x->attempt,
                 ErrorResponse(TransportError::kOther,
                               std::string("curl_multi_add_handle: ") + curl_multi_strerror(rc)));
  }
}

CURL* CurlTransport::Impl::NewEasy() {
  if (spare_easy_.empty()) return curl_easy_init();
  CURL* e = spare_easy_.back();
  spare_easy_.pop_back();
  return e;
}

void CurlTransport::Impl::RecycleEasy(CURL* easy) {
  constexpr size_t kMaxSpare = 256;
  curl_easy_setopt(easy, CURLOPT_SHARE, nullptr);  // curl_easy_reset keeps the share
  if (spare_easy_.size() >= kMaxSpare || shut_down_) {
    curl_easy_cleanup(easy);
    return;
  }
  curl_easy_reset(easy);
  spare_easy_.push_back(easy);
}

}  // namespace bulkhead
