// RedisScript: a Lua script known by its SHA1. Run sends EVALSHA and, when the server answers
// NOSCRIPT (a restarted or failed-over server, SCRIPT FLUSH), sends EVAL with the source, which
// also caches it on the server, so the script is retried once per such reply.
// Threading: immutable after construction; Run follows RedisConnection's rules (the loop's
// thread). The script object may be destroyed while a Run is in flight.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "bulkhead/redis/redis_connection.h"

namespace bulkhead {

class RedisScript {
 public:
  explicit RedisScript(std::string source);

  const std::string& source() const { return *source_; }
  // Lowercase hex SHA1 of the source, as SCRIPT LOAD returns it.
  const std::string& sha1() const { return sha1_; }

  // Runs the script on `conn` with KEYS = `keys`, ARGV = `args`; `callback` gets the script's
  // reply (an error reply when the script failed, see RedisConnection::ReplyCallback), under
  // RedisConnection's callback rules (it never runs once `conn` is destroyed). `keys` and `args`
  // are moved into the command, which is kept (not copied) until the reply for the NOSCRIPT retry.
  void Run(RedisConnection& conn, std::vector<std::string> keys, std::vector<std::string> args,
           RedisConnection::ReplyCallback callback) const;

 private:
  std::shared_ptr<const std::string> source_;
  std::string sha1_;
};

}  // namespace bulkhead
