#include "bulkhead/redis/redis_reply.h"

#include <hiredis/hiredis.h>

namespace bulkhead {

RedisReply RedisReply::OfInteger(int64_t value) {
  RedisReply r;
  r.type_ = Type::kInteger;
  r.integer_ = value;
  return r;
}

RedisReply RedisReply::OfArray(std::vector<RedisReply> elements) {
  RedisReply r;
  r.type_ = Type::kArray;
  r.elements_ = std::move(elements);
  return r;
}

RedisReply RedisReply::FromHiredis(const redisReply& reply) {
  switch (reply.type) {
    case REDIS_REPLY_STATUS:
      return OfStatus(std::string(reply.str, reply.len));
    case REDIS_REPLY_ERROR:
      return OfError(std::string(reply.str, reply.len));
    case REDIS_REPLY_STRING:
      return OfString(std::string(reply.str, reply.len));
    case REDIS_REPLY_INTEGER:
      return OfInteger(reply.integer);
    case REDIS_REPLY_ARRAY: {
      std::vector<RedisReply> elements;
      elements.reserve(reply.elements);
      for (size_t i = 0; i < reply.elements; ++i) {
        elements.push_back(FromHiredis(*reply.element[i]));
      }
      return OfArray(std::move(elements));
    }
    case REDIS_REPLY_NIL:
    default:
      return OfNil();
  }
}

bool RedisReply::IsErrorCode(std::string_view code) const {
  if (type_ != Type::kError || str_.size() < code.size()) return false;
  if (str_.compare(0, code.size(), code) != 0) return false;
  return str_.size() == code.size() || str_[code.size()] == ' ';
}

bool RedisReply::Is(std::string_view text) const {
  return (type_ == Type::kStatus || type_ == Type::kString) && str_ == text;
}

std::string RedisReply::ToString() const {
  constexpr size_t kMaxShown = 200;
  auto cut = [&](const std::string& s) {
    return s.size() <= kMaxShown ? s : s.substr(0, kMaxShown) + "...";
  };
  switch (type_) {
    case Type::kStatus:
      return "+" + cut(str_);
    case Type::kError:
      return "-" + cut(str_);
    case Type::kInteger:
      return ":" + std::to_string(integer_);
    case Type::kString:
      return "$\"" + cut(str_) + "\"";
    case Type::kNil:
      return "nil";
    case Type::kArray: {
      std::string out = "[";
      for (size_t i = 0; i < elements_.size(); ++i) {
        if (i > 0) out += ", ";
        if (out.size() > kMaxShown) {
          out += "...";
          break;
        }
        out += elements_[i].ToString();
      }
      return out + "]";
    }
  }
  return "?";
}

}  // namespace bulkhead
