// RedisReply: one RESP2 reply as an owned C++ value (status, error, integer, bulk string, nil, or
// an array of replies), converted from hiredis's redisReply.
// Value type; thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

struct redisReply;

namespace bulkhead {

class RedisReply {
 public:
  enum class Type { kStatus, kError, kInteger, kString, kNil, kArray };

  RedisReply() = default;  // nil
  static RedisReply OfStatus(std::string text) {
    return RedisReply(Type::kStatus, std::move(text));
  }
  static RedisReply OfError(std::string text) { return RedisReply(Type::kError, std::move(text)); }
  static RedisReply OfString(std::string bytes) {
    return RedisReply(Type::kString, std::move(bytes));
  }
  static RedisReply OfInteger(int64_t value);
  static RedisReply OfNil() { return RedisReply(); }
  static RedisReply OfArray(std::vector<RedisReply> elements);
  // A deep copy of `reply` (the caller keeps and frees `reply`).
  static RedisReply FromHiredis(const redisReply& reply);

  Type type() const { return type_; }
  bool is_error() const { return type_ == Type::kError; }
  bool is_nil() const { return type_ == Type::kNil; }
  bool is_array() const { return type_ == Type::kArray; }
  bool is_string() const { return type_ == Type::kString; }
  bool is_integer() const { return type_ == Type::kInteger; }
  bool is_status() const { return type_ == Type::kStatus; }

  // The text of a status or error, the bytes of a bulk string; empty for the other types.
  const std::string& str() const { return str_; }
  // The value of an integer reply; 0 for the other types.
  int64_t integer() const { return integer_; }
  // The elements of an array; empty for the other types.
  const std::vector<RedisReply>& elements() const { return elements_; }
  std::vector<RedisReply>& mutable_elements() { return elements_; }

  // True for an error whose first word is `code` ("NOSCRIPT", "READONLY", "WRONGPASS", ...).
  bool IsErrorCode(std::string_view code) const;
  // True for a status or bulk string equal to `text` (e.g. "OK", "PONG").
  bool Is(std::string_view text) const;

  // A one-line rendering for logs and test failures ("+OK", "-ERR ...", ":3", "$\"abc\"", "nil",
  // "[...]"); long strings are cut.
  std::string ToString() const;

  bool operator==(const RedisReply&) const = default;

 private:
  RedisReply(Type type, std::string str) : type_(type), str_(std::move(str)) {}

  Type type_ = Type::kNil;
  std::string str_;
  int64_t integer_ = 0;
  std::vector<RedisReply> elements_;
};

}  // namespace bulkhead
