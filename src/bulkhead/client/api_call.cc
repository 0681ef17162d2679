#include "bulkhead/client/api_call.h"

#include <curl/curl.h>
#include <openssl/crypto.h>

#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>

namespace bulkhead {
namespace {

size_t AppendBody(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

}  // namespace

Result<ApiResponse> CallApi(const std::string& method, const std::string& url,
                            const std::string& body, const std::string& content_type,
                            const std::string& ca_file, long timeout_s) {
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) return Status::Internal("curl_easy_init failed");
  ApiResponse response;
  curl_slist* headers = nullptr;
  std::string auth;
  if (const char* pw = std::getenv("BULKHEAD_PASSWORD"); pw && *pw) {
    auth = std::string("Authorization: Bearer ") + pw;
    headers = curl_slist_append(headers, auth.c_str());
  }
  std::string type_header = "Content-Type: " + content_type;
  if (!content_type.empty()) headers = curl_slist_append(headers, type_header.c_str());
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> header_list(headers,
                                                                          curl_slist_free_all);
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(c, CURLOPT_PROXY, "");  // never send a key through an HTTP proxy
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  // https://: the server's certificate is verified (against --ca, else the system's CAs).
  if (!ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, ca_file.c_str());
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 5L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, timeout_s);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, AppendBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &response.body);
  if (method == "PUT" || method == "POST") {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  }
  CURLcode rc = curl_easy_perform(c);
  if (!auth.empty()) OPENSSL_cleanse(auth.data(), auth.size());
  if (rc != CURLE_OK) {
    return Status::Unavailable("cannot reach the bulkhead HTTP API at " + url + ": " +
                               curl_easy_strerror(rc) +
                               " (is `bulkhead serve` running there? see --http)");
  }
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &response.status);
  return response;
}

Status ApiError(const ApiResponse& r, const std::string& what) {
  auto doc = nlohmann::json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  std::string message = doc.is_object() && doc.contains("error") && doc["error"].is_string()
                            ? doc["error"].get<std::string>()
                            : r.body;
  std::string code = " (HTTP " + std::to_string(r.status) + ")";
  switch (r.status) {
    case 401: {
      const char* pw = std::getenv("BULKHEAD_PASSWORD");
      return Status::PermissionDenied(
          what + ": the server needs its password" +
          (pw && *pw ? std::string(", and refused BULKHEAD_PASSWORD") : ": set BULKHEAD_PASSWORD") +
          code);
    }
    case 400:
      return Status::InvalidArgument(what + ": " + message + code);
    case 404:
      return Status::NotFound(what + ": " + message + code);
    default:
      return Status::Unavailable(what + ": " + message + code);
  }
}

std::string ApiBaseUrl(const std::string& http_address) {
  bool has_scheme = http_address.rfind("http://", 0) == 0 || http_address.rfind("https://", 0) == 0;
  std::string base = has_scheme ? http_address : "http://" + http_address;
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base;
}

}  // namespace bulkhead
