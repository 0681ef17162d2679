#include "bulkhead/redis/redis_script.h"

#include <openssl/sha.h>

namespace bulkhead {

RedisScript::RedisScript(std::string source)
    : source_(std::make_shared<const std::string>(std::move(source))) {
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(source_->data()), source_->size(), digest);
  static const char kHex[] = "0123456789abcdef";
  sha1_.reserve(2 * SHA_DIGEST_LENGTH);
  for (unsigned char b : digest) {
    sha1_.push_back(kHex[b >> 4]);
    sha1_.push_back(kHex[b & 0xf]);
  }
}

void RedisScript::Run(RedisConnection& conn, const std::vector<std::string>& keys,
                      const std::vector<std::string>& args,
                      RedisConnection::ReplyCallback callback) const {
  std::vector<std::string> argv;
  argv.reserve(3 + keys.size() + args.size());
  argv.push_back("EVALSHA");
  argv.push_back(sha1_);
  argv.push_back(std::to_string(keys.size()));
  argv.insert(argv.end(), keys.begin(), keys.end());
  argv.insert(argv.end(), args.begin(), args.end());
  // The retry reuses argv with EVAL and the source in place of EVALSHA and the SHA1. The callback
  // runs only while `conn` lives (RedisConnection's contract), so capturing it is safe.
  auto retry = std::make_shared<std::vector<std::string>>(argv);
  conn.Send(std::move(argv), [&conn, retry, source = source_,
                              callback = std::move(callback)](Result<RedisReply> r) mutable {
    if (!r.ok() || !r->IsErrorCode("NOSCRIPT")) {
      callback(std::move(r));
      return;
    }
    (*retry)[0] = "EVAL";
    (*retry)[1] = *source;
    conn.Send(std::move(*retry), std::move(callback));
  });
}

}  // namespace bulkhead
