// Status and Result<T>: how errors cross module boundaries in bulkhead. Nothing throws across a
// module boundary; a function that can fail returns Status (no value) or Result<T> (value or
// error).
//
// Idiom:
//   Result<Job> job = ParseJob(line);
//   if (!job.ok()) return job.status();
//   Use(*job);
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace bulkhead {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // the caller's input is malformed or out of range
  kNotFound,            // the named thing does not exist
  kAlreadyExists,       // a thing with that identity exists already
  kFailedPrecondition,  // the system is not in a state where the call is allowed
  kResourceExhausted,   // a limit was hit (connections, line length, memory)
  kUnavailable,         // a dependency (disk, Redis, a remote host) cannot be reached now
  kPermissionDenied,    // authentication or authorisation failed
  kInternal,            // an invariant broke; a bug
};

const char* StatusCodeName(StatusCode code);

// Thread-compatible value type.
class Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string m) {
    return {StatusCode::kInvalidArgument, std::move(m)};
  }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
  static Status FailedPrecondition(std::string m) {
    return {StatusCode::kFailedPrecondition, std::move(m)};
  }
  static Status ResourceExhausted(std::string m) {
    return {StatusCode::kResourceExhausted, std::move(m)};
  }
  static Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
  static Status PermissionDenied(std::string m) {
    return {StatusCode::kPermissionDenied, std::move(m)};
  }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  // The human-readable message, without the code name. Empty for OK.
  const std::string& message() const { return message_; }
  // "CODE_NAME: message", for logs.
  std::string ToString() const;

  bool operator==(const Status& other) const = default;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Holds either a T or a non-OK Status. Accessing the value of an error Result is a bug (asserts).
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT: implicit by design
    assert(!std::get<Status>(v_).ok() && "Result built from an OK Status has no value");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  // OK when the Result holds a value.
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(v_); }

  T& value() & {
    assert(ok());
    return std::get<T>(v_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<T>(v_);
  }
  T&& value() && {
    assert(ok());
    return std::get<T>(std::move(v_));
  }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace bulkhead
