#include "bulkhead/transport/curl_url.h"

#include <curl/curl.h>

#include <cstdlib>
#include <string_view>

#include "bulkhead/util/ascii.h"

namespace bulkhead {

Result<UrlParts> ParseUrl(const std::string& url) {
  CURLU* u = curl_url();
  if (u == nullptr) return Status::Internal("out of memory");
  UrlParts parts;
  CURLUcode rc = curl_url_set(u, CURLUPART_URL, url.c_str(), 0);
  char* part = nullptr;
  if (rc == CURLUE_OK) rc = curl_url_get(u, CURLUPART_SCHEME, &part, 0);
  if (rc == CURLUE_OK) {
    parts.scheme = part;
    curl_free(part);
    part = nullptr;
    rc = curl_url_get(u, CURLUPART_HOST, &part, 0);
  }
  if (rc == CURLUE_OK) {
    std::string_view host = part;
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
      host = host.substr(1, host.size() - 2);
    }
    parts.host = std::string(host);
    curl_free(part);
    part = nullptr;
    rc = curl_url_get(u, CURLUPART_PORT, &part, CURLU_DEFAULT_PORT);
  }
  if (rc == CURLUE_OK) {
    parts.port = std::strtol(part, nullptr, 10);
    curl_free(part);
    part = nullptr;
    if (curl_url_get(u, CURLUPART_ZONEID, &part, 0) == CURLUE_OK) {
      curl_free(part);
      curl_url_cleanup(u);
      return Status::InvalidArgument("URL with an IPv6 zone id refused: " + url);
    }
  }
  curl_url_cleanup(u);
  if (rc != CURLUE_OK) {
    return Status::InvalidArgument(std::string("bad URL '") + url + "': " + curl_url_strerror(rc));
  }
  return parts;
}

std::string OriginKey(const UrlParts& url) {
  return AsciiLower(url.scheme + "://" + url.host + ":" + std::to_string(url.port));
}

bool SameOrigin(const UrlParts& a, const UrlParts& b) {
  return EqualsIgnoreCase(a.scheme, b.scheme) && EqualsIgnoreCase(a.host, b.host) &&
         a.port == b.port;
}

}  // namespace bulkhead
