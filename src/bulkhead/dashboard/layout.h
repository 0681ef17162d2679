// The frame of every dashboard page: head (the embedded CSS and JS, nothing external), the nav
// with the jid search box, the "no password set" banner, and the security headers every dashboard
// response carries. Pure functions of a PageContext; any thread.
#pragma once

#include <string>
#include <string_view>

#include "bulkhead/http/http_server.h"
#include "bulkhead/util/clock.h"

namespace bulkhead::dashboard {

// What every page needs besides its own data.
struct PageContext {
  std::string base;        // http_base_path: "" or "/bulkhead" (settings.cc CheckBasePath)
  std::string csrf_token;  // for the forms of this page (CsrfGuard::TokenFor the request)
  bool has_password = false;
  TimePoint now{};
  std::string flash;  // a message to show on top (escaped here), e.g. after an action
};

// The nav entries; `active` is the path of the current page ("/", "/queues", ...).
std::string RenderLayout(const PageContext& ctx, std::string_view active, std::string_view title,
                         std::string_view body);

// <input type="hidden" name="csrf" value="...">
std::string CsrfField(const PageContext& ctx);

// Content-Security-Policy: scripts, styles and images from this origin only, no inline script and
// no style attributes, no framing, forms post only here.
inline constexpr char kContentSecurityPolicy[] =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

// Adds the security headers (CSP, X-Frame-Options: DENY, X-Content-Type-Options: nosniff,
// Referrer-Policy) to `r`.
void AddSecurityHeaders(HttpResponseOut& r);

// A text/html page with the security headers.
HttpResponseOut HtmlResponse(int status, std::string body);

}  // namespace bulkhead::dashboard
