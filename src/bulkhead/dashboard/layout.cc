#include "bulkhead/dashboard/layout.h"

#include "bulkhead/dashboard/html.h"

namespace bulkhead::dashboard {
namespace {

struct NavEntry {
  const char* path;
  const char* label;
};
constexpr NavEntry kNav[] = {{"/", "Overview"},       {"/queues", "Queues"},
                             {"/busy", "Busy"},       {"/scheduled", "Scheduled"},
                             {"/retries", "Retries"}, {"/dead", "Dead"},
                             {"/hosts", "Hosts"},     {"/throttles", "Throttles & cron"},
                             {"/relay", "Relay"}};

}  // namespace

std::string RenderLayout(const PageContext& ctx, std::string_view active, std::string_view title,
                         std::string_view body) {
  const std::string& b = ctx.base;
  std::string h;
  h.reserve(body.size() + 2048);
  const std::string assets = Escape(b) + "/assets/";
  h += "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  h += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">";
  h += "<meta name=\"bulkhead-base\" content=\"" + Escape(b) + "\">";
  h += "<title>" + Escape(title) + " · bulkhead</title>";
  h += "<link rel=\"icon\" href=\"" + assets + "favicon.svg\" type=\"image/svg+xml\">";
  h += "<link rel=\"stylesheet\" href=\"" + assets + "dashboard.css\">";
  h += "<script src=\"" + assets + "dashboard.js\" defer></script></head><body>";
  h += "<header><nav><a class=\"brand\" href=\"" + Escape(b) + "/\">bulkhead</a>";
  for (const auto& e : kNav) {
    h += "<a href=\"" + Escape(b) + (std::string_view(e.path) == "/" ? "/" : e.path) + "\"";
    if (active == e.path) h += " class=\"active\" aria-current=\"page\"";
    h += ">" + Escape(e.label) + "</a>";
  }
  h += "<form method=\"get\" action=\"" + Escape(b) +
       "/search\" role=\"search\">"
       "<input type=\"search\" name=\"jid\" placeholder=\"jid\" aria-label=\"Find a job by jid\">"
       "<button type=\"submit\">Find</button></form></nav></header>";
  if (!ctx.has_password) {
    h += "<div class=\"banner\" id=\"no-password\">No password set: anyone who can reach this "
         "port can see and change every job. Set <code>password</code> (or BULKHEAD_PASSWORD) "
         "and keep <code>--http</code> on loopback.</div>";
  }
  h += "<main>";
  if (!ctx.flash.empty()) h += "<p class=\"flash\" role=\"status\">" + Escape(ctx.flash) + "</p>";
  h += "<h1>" + Escape(title) + "</h1>";
  h += body;
  h += "</main></body></html>\n";
  return h;
}

std::string CsrfField(const PageContext& ctx) {
  return "<input type=\"hidden\" name=\"csrf\" value=\"" + Escape(ctx.csrf_token) + "\">";
}

void AddSecurityHeaders(HttpResponseOut& r) {
  r.headers.emplace_back("Content-Security-Policy", kContentSecurityPolicy);
  r.headers.emplace_back("X-Frame-Options", "DENY");
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  r.headers.emplace_back("Referrer-Policy", "same-origin");
}

HttpResponseOut HtmlResponse(int status, std::string body) {
  HttpResponseOut r;
  r.status = status;
  r.content_type = "text/html; charset=utf-8";
  r.body = std::move(body);
  AddSecurityHeaders(r);
  return r;
}

}  // namespace bulkhead::dashboard
