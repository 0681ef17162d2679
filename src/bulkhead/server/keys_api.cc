#include "bulkhead/server/keys_api.h"

#include <cctype>
#include <nlohmann/json.hpp>

#include "bulkhead/http/bearer_auth.h"
#include "bulkhead/util/json.h"
#include "bulkhead/util/percent_encoding.h"

namespace bulkhead {
namespace {

nlohmann::json KeyJson(const StoreKeyRing::KeyInfo& key) {
  return {{"key_id", key.key_id},
          {"algorithm", "rsa-sha256"},
          {"bits", key.bits},
          {"public_key_pem", key.public_key_pem},
          {"fingerprint", key.fingerprint}};
}

// The key id from "/api/keys/<url-encoded key id>", decoded.
Result<std::string> KeyIdFromPath(const std::string& path) {
  std::string_view encoded =
      std::string_view(path).substr(std::string_view(kKeysApiPath).size() + 1);
  if (encoded.empty()) {
    return Status::InvalidArgument("the path must name a key: /api/keys/<url-encoded key id>");
  }
  Result<std::string> key_id = PercentDecode(encoded);
  if (!key_id.ok())
    return Status::InvalidArgument("key id in the path: " + key_id.status().message());
  return key_id;
}

// PUT /api/keys/<key id>: the body is the PEM private key; 201 when new, 200 when replaced.
void PutKey(StoreKeyRing& keys, const HttpRequestIn& req, HttpServer::Reply reply) {
  Result<std::string> key_id = KeyIdFromPath(req.path);
  if (!key_id.ok()) {
    reply(HttpResponseOut::Error(400, key_id.status().message()));
    return;
  }
  if (req.body.empty()) {
    reply(
        HttpResponseOut::Error(400, "the request body must be the PEM private key (it is empty)"));
    return;
  }
  // HttpRequestIn is const: the registry wipes its own copy of the PEM.
  keys.Add(*key_id, req.body, [reply](Result<StoreKeyRing::AddResult> r) {
    if (!r.ok()) {
      reply(HttpResponseOut::Error(r.status()));
      return;
    }
    reply(HttpResponseOut::Json(r->created ? 201 : 200, DumpJson(KeyJson(r->key))));
  });
}

}  // namespace

void RegisterKeysApi(HttpServer& http, StoreKeyRing& keys, const std::string& password) {
  const std::string prefix = std::string(kKeysApiPath) + "/";
  http.Route("GET", kKeysApiPath,
             RequireBearer(password, [&keys](const HttpRequestIn&, HttpServer::Reply reply) {
               nlohmann::json out = nlohmann::json::array();
               for (const auto& key : keys.List()) out.push_back(KeyJson(key));
               reply(HttpResponseOut::Json(200, DumpJson(out)));
             }));
  http.Route("GET", prefix,
             RequireBearer(password, [&keys](const HttpRequestIn& req, HttpServer::Reply reply) {
               Result<std::string> key_id = KeyIdFromPath(req.path);
               if (!key_id.ok()) {
                 reply(HttpResponseOut::Error(400, key_id.status().message()));
                 return;
               }
               auto key = keys.Describe(*key_id);
               if (!key) {
                 reply(HttpResponseOut::Error(
                     404, "no signing key is registered for \"" + *key_id + "\""));
                 return;
               }
               reply(HttpResponseOut::Json(200, DumpJson(KeyJson(*key))));
             }));
  http.Route("PUT", prefix,
             RequireBearer(password, [&keys](const HttpRequestIn& req, HttpServer::Reply reply) {
               PutKey(keys, req, std::move(reply));
             }));
  http.Route("DELETE", prefix,
             RequireBearer(password, [&keys](const HttpRequestIn& req, HttpServer::Reply reply) {
               Result<std::string> key_id = KeyIdFromPath(req.path);
               if (!key_id.ok()) {
                 reply(HttpResponseOut::Error(400, key_id.status().message()));
                 return;
               }
               keys.Remove(*key_id, [reply](Status s) {
                 if (!s.ok()) {
                   reply(HttpResponseOut::Error(s));
                   return;
                 }
                 HttpResponseOut r;
                 r.status = 204;
                 r.content_type = "application/json";
                 reply(std::move(r));
               });
             }));
}

}  // namespace bulkhead
