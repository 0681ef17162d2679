#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string_view>

#include "bulkhead/redis/redis_url.h"
#include "bulkhead/store/embedded_store.h"
#include "bulkhead/store/redis_store.h"
#include "bulkhead/store/sqlite_change_log.h"
#include "bulkhead/store/store.h"
#include "bulkhead/util/store_url.h"

namespace bulkhead {
namespace {

bool IsRedisUrl(std::string_view url) {
  return url.starts_with("redis://") || url.starts_with("rediss://") ||
         url.starts_with("redis-sentinel://");
}

Result<std::unique_ptr<Store>> MakeRedisStore(const std::string& url, const StoreOptions& options) {
  auto parsed = ParseRedisUrl(url);  // its errors never hold the password
  if (!parsed.ok()) return parsed.status();
  if (options.io_context == nullptr) {
    return Status::InvalidArgument("the redis store at " + parsed->Redacted() +
                                   " needs an event loop (StoreOptions::io_context)");
  }
  if (options.durability != "process" && options.durability != "power" &&
      options.durability != "replicated") {
    return Status::InvalidArgument("durability must be \"process\", \"power\" or \"replicated\", " +
                                   std::string("not \"") + options.durability + "\"");
  }
  if (options.redis_heartbeat_every.count() <= 0 ||
      options.redis_heartbeat_ttl <= options.redis_heartbeat_every ||
      options.redis_reap_every.count() <= 0) {
    return Status::InvalidArgument(
        "the redis heartbeat TTL must exceed its refresh interval, and both intervals be positive");
  }
  RedisStoreOptions o;
  o.url = std::move(*parsed);
  o.redis_namespace = options.redis_namespace;
  o.ca_file = options.redis_ca_file;
  o.node_id = options.node_id.empty() ? MakeNodeId() : options.node_id;
  o.replicated = options.durability == "replicated";
  o.wait_timeout = options.redis_wait_timeout;
  o.heartbeat_every = options.redis_heartbeat_every;
  o.heartbeat_ttl = options.redis_heartbeat_ttl;
  o.reap_every = options.redis_reap_every;
  o.give_back_at_stop = options.redis_give_back_at_stop;
  return std::unique_ptr<Store>(std::make_unique<RedisStore>(*options.io_context, std::move(o)));
}

}  // namespace

std::string MakeNodeId() {
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') std::strcpy(host, "node");
  std::random_device rd;
  char suffix[8];
  std::snprintf(suffix, sizeof(suffix), "%06x", static_cast<unsigned>(rd() & 0xffffff));
  return std::string(host) + "-" + std::to_string(::getpid()) + "-" + suffix;
}

Result<std::unique_ptr<Store>> OpenStoreFromUrl(const std::string& url, Store::Poster poster,
                                                const StoreOptions& options) {
  std::unique_ptr<Store> store;
  if (url == "memory:" || url == "memory") {
    store = std::make_unique<EmbeddedStore>("memory", nullptr);
  } else if (std::optional<std::string> sqlite = SqliteStorePath(url)) {
    const std::string& path = *sqlite;
    if (path.empty()) return Status::InvalidArgument("store URL " + url + " has no file path");
    if (options.durability != "process" && options.durability != "power") {
      return Status::InvalidArgument("durability must be \"process\" or \"power\", not \"" +
                                     options.durability + "\"");
    }
    bool salvage = options.salvage_damaged_jobs;
    store = std::make_unique<EmbeddedStore>(
        "sqlite", std::make_unique<SqliteChangeLog>(path, std::move(poster), options.durability,
                                                    options.max_page_count_for_tests, salvage));
  } else if (IsRedisUrl(url)) {
    auto redis = MakeRedisStore(url, options);
    if (!redis.ok()) return redis.status();
    store = std::move(*redis);
  } else {
    return Status::InvalidArgument(
        "unsupported store URL \"" + url +
        "\": use sqlite:PATH, memory:, redis://, rediss:// or redis-sentinel://");
  }
  Status s = store->Open();
  if (!s.ok()) return s;
  return store;
}

}  // namespace bulkhead
