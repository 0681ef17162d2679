// Test-only: a Transport whose answers the test decides, with no sockets, threads or sleeps.
// Header-only; used by the dispatch tests (dispatcher_test, attempt_runner_test and the
// simulation), never by the library.
//
// Two ways to answer, mixable per host:
//   - by hand: every Send is recorded in `calls`; the test answers call i with Answer(i, ...);
//   - by script: Script(host, behaviour) makes every later request to that host answer itself at
//     send time + behaviour.latency (on the injected clock), or with kTimeoutTotal at send time +
//     the request's deadlines.total when the latency reaches it. The test delivers due answers with
//     AnswerDue(now) and finds the next one with NextAnswerAt().
// Callbacks never run inside Send. Counters per host: requests started, in flight, most in flight.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "bulkhead/transport/transport.h"
#include "bulkhead/util/clock.h"

namespace bulkhead {

class ScriptedTransport final : public Transport {
 public:
  struct Call {
    HttpRequest request;
    DoneCallback done;
    bool answered = false;
    TimePoint sent{};  // on the injected clock; epoch without one
  };
  // How a scripted host answers.
  struct Behaviour {
    Duration latency = std::chrono::milliseconds(200);
    HttpResponse response = Status(202);
  };

  ScriptedTransport() = default;
  // Needed for Script: send times come from `clock`, which must outlive the transport.
  explicit ScriptedTransport(const Clock& clock) : clock_(&clock) {}

  void Script(const std::string& host, Behaviour behaviour) {
    ASSERT_NE(clock_, nullptr) << "Script needs the clock-taking constructor";
    scripts_[host] = std::move(behaviour);
  }

  void Send(HttpRequest request, DoneCallback done) override {
    const std::string host = HostOf(request.url);
    const TimePoint now = clock_ ? clock_->Now() : TimePoint{};
    const size_t index = calls.size();
    if (auto it = scripts_.find(host); it != scripts_.end()) {
      const Behaviour& b = it->second;
      const Duration total = request.deadlines.total;
      if (b.latency >= total) {
        due_.push({now + total, index, Error(TransportError::kTimeoutTotal)});
      } else {
        due_.push({now + b.latency, index, b.response});
      }
    }
    calls.push_back(Call{std::move(request), std::move(done), false, now});
    ++started_[host];
    int& flying = in_flight_[host];
    ++flying;
    max_in_flight_[host] = std::max(max_in_flight_[host], flying);
    ++in_flight_total_;
  }
  size_t InFlight() const override { return in_flight_total_; }
  void Shutdown() override {
    for (size_t i = 0; i < calls.size(); ++i) {
      if (!calls[i].answered) Answer(i, Error(TransportError::kCancelled));
    }
  }

  // Answers call `i` (in Send order).
  void Answer(size_t i, HttpResponse r) {
    ASSERT_LT(i, calls.size()) << "no request #" << i << " was sent";
    ASSERT_FALSE(calls[i].answered) << "request #" << i << " answered twice";
    calls[i].answered = true;
    --in_flight_[HostOf(calls[i].request.url)];
    --in_flight_total_;
    auto done = std::move(calls[i].done);
    done(std::move(r));
    if (after_answer_) after_answer_();
  }
  // Runs `fn` after each answer's callback has returned (Answer, AnswerDue, Shutdown). Tests whose
  // store answers later settle their event loop there, so that what an answer sets off is done
  // before the test looks, or the next answer comes, as with a store that answers inline.
  void AfterEachAnswer(std::function<void()> fn) { after_answer_ = std::move(fn); }
  // Indices of unanswered calls whose URL contains `needle`.
  std::vector<size_t> Pending(const std::string& needle = "") const {
    std::vector<size_t> out;
    for (size_t i = 0; i < calls.size(); ++i) {
      if (!calls[i].answered && calls[i].request.url.find(needle) != std::string::npos) {
        out.push_back(i);
      }
    }
    return out;
  }

  // When the next scripted answer is due; nullopt when none is pending.
  std::optional<TimePoint> NextAnswerAt() {
    DropAnswered();
    if (due_.empty()) return std::nullopt;
    return due_.top().at;
  }
  // Delivers every scripted answer due at or before `now`, earliest first (ties in send order),
  // including those of requests sent by the callbacks meanwhile. Returns how many.
  size_t AnswerDue(TimePoint now) {
    size_t n = 0;
    while (auto next = NextAnswerAt()) {
      if (*next > now) break;
      Due d = due_.top();
      due_.pop();
      Answer(d.index, std::move(d.response));
      ++n;
    }
    return n;
  }

  int started(const std::string& host) const { return Get(started_, host); }
  int in_flight(const std::string& host) const { return Get(in_flight_, host); }
  int max_in_flight(const std::string& host) const { return Get(max_in_flight_, host); }

  static HttpResponse Status(int status, HttpHeaders headers = {}) {
    HttpResponse r;
    r.status = status;
    r.headers = std::move(headers);
    return r;
  }
  static HttpResponse Error(TransportError kind) {
    HttpResponse r;
    r.error = kind;
    r.error_message = TransportErrorName(kind);
    return r;
  }
  // "host" or "host:port" of an absolute URL (the authority; no userinfo expected).
  static std::string HostOf(const std::string& url) {
    size_t start = url.find("://");
    start = start == std::string::npos ? 0 : start + 3;
    size_t end = url.find_first_of("/?#", start);
    return url.substr(start, end == std::string::npos ? std::string::npos : end - start);
  }

  std::vector<Call> calls;

 private:
  struct Due {
    TimePoint at;
    size_t index;
    HttpResponse response;
  };
  struct Later {
    bool operator()(const Due& a, const Due& b) const {
      return a.at != b.at ? a.at > b.at : a.index > b.index;
    }
  };
  static int Get(const std::map<std::string, int>& m, const std::string& host) {
    auto it = m.find(host);
    return it == m.end() ? 0 : it->second;
  }
  // Scripted answers of calls answered by hand (or by Shutdown) are dropped.
  void DropAnswered() {
    while (!due_.empty() && calls[due_.top().index].answered) due_.pop();
  }

  const Clock* clock_ = nullptr;
  std::function<void()> after_answer_;
  std::map<std::string, Behaviour> scripts_;
  std::priority_queue<Due, std::vector<Due>, Later> due_;
  std::map<std::string, int> started_, in_flight_, max_in_flight_;
  size_t in_flight_total_ = 0;
};

}  // namespace bulkhead
