#include "bulkhead/redis/redis_script.h"

#include <openssl/sha.h>

#include <iterator>

#include "bulkhead/util/hex.h"

namespace bulkhead {

RedisScript::RedisScript(std::string source)
    : source_(std::make_shared<const std::string>(std::move(source))) {
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(source_->data()), source_->size(), digest);
  sha1_ = HexLower(digest, SHA_DIGEST_LENGTH);
}

void RedisScript::Run(RedisConnection& conn, std::vector<std::string> keys,
                      std::vector<std::string> args,
                      RedisConnection::ReplyCallback callback) const {
  auto argv = std::make_shared<std::vector<std::string>>();
  argv->reserve(3 + keys.size() + args.size());
  argv->push_back("EVALSHA");
  argv->push_back(sha1_);
  argv->push_back(std::to_string(keys.size()));
  std::move(keys.begin(), keys.end(), std::back_inserter(*argv));
  std::move(args.begin(), args.end(), std::back_inserter(*argv));
  // Send encodes argv at once; the retry reuses it with EVAL and the source in place of EVALSHA
  // and the SHA1. The callback runs only while `conn` lives (RedisConnection's contract), so
  // capturing it is safe.
  conn.Send(*argv, [&conn, argv, source = source_,
                    callback = std::move(callback)](Result<RedisReply> r) mutable {
    if (!r.ok() || !r->IsErrorCode("NOSCRIPT")) {
      callback(std::move(r));
      return;
    }
    (*argv)[0] = "EVAL";
    (*argv)[1] = *source;
    conn.Send(*argv, std::move(callback));
  });
}

}  // namespace bulkhead
