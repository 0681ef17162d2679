#include "bulkhead/store/redis_host_states.h"

#include <nlohmann/json.hpp>

#include "bulkhead/store/redis_store_scripts.h"

namespace bulkhead {
namespace {

std::string HostStateJson(const HostStateRecord& r) {
  return nlohmann::json{{"breaker_open_until_us", r.breaker_open_until_us},
                        {"breaker_series_openings", r.breaker_series_openings},
                        {"breaker_openings", r.breaker_openings},
                        {"failing_since_us", r.failing_since_us},
                        {"unavailable", r.unavailable},
                        {"retry_after_until_us", r.retry_after_until_us}}
      .dump();
}

Result<HostStateRecord> ParseHostState(const std::string& host, const std::string& text) {
  auto doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) {
    return Status::Internal("redis store: the stored state of host " + host + " is not JSON");
  }
  HostStateRecord r;
  r.host = host;
  r.breaker_open_until_us = doc.value("breaker_open_until_us", int64_t{0});
  r.breaker_series_openings = doc.value("breaker_series_openings", int32_t{0});
  r.breaker_openings = doc.value("breaker_openings", int64_t{0});
  r.failing_since_us = doc.value("failing_since_us", int64_t{0});
  r.unavailable = doc.value("unavailable", false);
  r.retry_after_until_us = doc.value("retry_after_until_us", int64_t{0});
  return r;
}

}  // namespace

void RedisHostStates::Put(const HostStateRecord& record, Done durable) {
  calls_.Command("put_host_state",
                 {"HSET", calls_.key_prefix() + "hosts", record.host, HostStateJson(record)},
                 OkOr(std::move(durable)));
  Publish(record.host);
}

void RedisHostStates::Remove(const std::string& host, Done durable) {
  calls_.Command("remove_host_state", {"HDEL", calls_.key_prefix() + "hosts", host},
                 OkOr(std::move(durable)));
  Publish(host);
}

void RedisHostStates::Publish(const std::string& host) {
  calls_.Command("publish_host_state",
                 {"PUBLISH", calls_.key_prefix() + "hosts", calls_.node() + " " + host},
                 [](Result<RedisReply>) {});
}

void RedisHostStates::List(HostStatesCallback cb) {
  calls_.Command("list_host_states", {"HGETALL", calls_.key_prefix() + "hosts"},
                 [cb = std::move(cb)](Result<RedisReply> r) {
                   if (!r.ok()) return cb(r.status());
                   std::vector<HostStateRecord> records;
                   for (auto& [host, text] : SortedPairs(*r)) {
                     auto record = ParseHostState(host, text);
                     if (!record.ok()) return cb(record.status());
                     records.push_back(std::move(*record));
                   }
                   cb(std::move(records));
                 });
}

}  // namespace bulkhead
