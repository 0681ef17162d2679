// Fuzz target: delivery target URLs (src/bulkhead/encoders/target_url.h), then what the transport
// does with the host of an accepted URL: an IP literal goes through IpAddress::Parse and the SSRF
// guard (src/bulkhead/transport/ssrf_guard.h).
// Input: the URL as it appears in a job (a Web Push endpoint, an inbox, a webhook URL).
// Invariants checked: an accepted URL has a scheme of http/https, a non-empty host, a non-zero port
// and a target starting with '/'; its origin plus target parses again to the same parts.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "bulkhead/encoders/target_url.h"
#include "bulkhead/transport/ip_address.h"
#include "bulkhead/transport/ssrf_guard.h"

namespace {

[[noreturn]] void Fail(const char* what, std::string_view url) {
  std::fprintf(stderr, "fuzz_target_url: %s for %.*s\n", what, static_cast<int>(url.size()),
               url.data());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view url(reinterpret_cast<const char*>(data), size);
  bulkhead::Result<bulkhead::TargetUrl> u = bulkhead::ParseTargetUrl(url);
  if (!u.ok()) {
    if (u.status().message().empty()) Fail("refusal without a message", url);
    return 0;
  }
  if (u->scheme != "http" && u->scheme != "https") Fail("scheme not http/https", url);
  if (u->host.empty()) Fail("empty host", url);
  if (u->port == 0) Fail("port 0", url);
  if (u->target.empty() || u->target.front() != '/') Fail("target does not start with /", url);
  std::string authority = u->Authority();
  std::string origin = u->Origin();
  auto again = bulkhead::ParseTargetUrl(origin + u->target);
  if (!again.ok()) Fail("origin + target does not parse again", url);
  if (again->scheme != u->scheme || again->host != u->host || again->port != u->port ||
      again->target != u->target) {
    Fail("origin + target parses to different parts", url);
  }

  // The transport resolves the host; an IP literal is checked by the SSRF guard as is.
  std::string_view host = u->host;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (auto ip = bulkhead::IpAddress::Parse(host)) {
    bulkhead::SsrfGuard strict(bulkhead::SsrfPolicy{});
    bulkhead::SsrfGuard open(bulkhead::SsrfPolicy{.allow_private_targets = true});
    (void)strict.CheckAddress(*ip);
    if (!open.CheckAddress(*ip).ok()) Fail("allow_private_targets refused an address", url);
    (void)strict.CheckScheme(u->scheme);
    (void)ip->ToUriString();
  }
  return 0;
}
