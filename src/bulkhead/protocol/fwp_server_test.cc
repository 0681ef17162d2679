// Transcript tests: an in-process FWP server on 127.0.0.1 port 0 (memory store), driven over a
// real socket line by line. Its event loop runs on the test thread, while a test waits for a reply
// (bounded) or lets time pass. Its timers run on a SimulatedClock: a test moves time (Pass) instead
// of waiting for a timeout or a FETCH's block time. Every test runs twice: "Inline" on the memory
// store as it is (it answers reads before the call returns) and "Deferred" on it wrapped in
// DeferredStore (every answer on a later turn of the loop, as from a networked store).
#include "bulkhead/protocol/fwp_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <functional>

#include "bulkhead/engine/engine.h"
#include "bulkhead/protocol/pwdhash.h"
#include "bulkhead/store/store.h"
#include "bulkhead/store/testing/deferred_store.h"
#include "bulkhead/util/simulated_clock.h"

namespace bulkhead {
namespace {

using namespace std::chrono_literals;

// How long a test waits for a reply (real time) before it reads "<timeout>".
constexpr auto kReplyTimeout = 5s;

class Conn {
 public:
  // `run_loop` runs the server's loop for one step: what is ready, or else waits briefly for
  // something to become ready.
  Conn(uint16_t port, std::function<void()> run_loop) : run_loop_(std::move(run_loop)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  }
  Conn(Conn&& other) noexcept
      : fd_(std::exchange(other.fd_, -1)),
        buf_(std::move(other.buf_)),
        closed_(other.closed_),
        run_loop_(std::move(other.run_loop_)) {}
  ~Conn() {
    if (fd_ >= 0) ::close(fd_);
  }
  void Send(const std::string& s) {
    ASSERT_EQ(::send(fd_, s.data(), s.size(), MSG_NOSIGNAL), (ssize_t)s.size());
  }
  // Each Send leaves at once (no Nagle wait for the server's delayed ACK of the previous one), so
  // that the server's loop can read it before the test moves the clock.
  void NoDelay() {
    int one = 1;
    ASSERT_EQ(::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)), 0);
  }
  // True when nothing has arrived (the server sent nothing and did not close). The caller lets
  // the server's loop run first (Pass).
  bool Quiet() {
    pollfd p{fd_, POLLIN, 0};
    return buf_.empty() && ::poll(&p, 1, 0) == 0;
  }
  // Reads one RESP line (with the bulk body for $n), or "<closed>" / "<timeout>" after
  // kReplyTimeout, running the server's loop meanwhile.
  std::string Read() {
    std::string line = ReadLine();
    if (line.size() > 1 && line[0] == '$' && line != "$-1") {
      size_t n = std::stoul(line.substr(1));
      while (buf_.size() < n + 2 && Fill()) {
      }
      std::string body = buf_.substr(0, n);
      buf_.erase(0, std::min(buf_.size(), n + 2));
      return line + " " + body;
    }
    return line;
  }

 private:
  // Runs the server's loop until bytes (or the close) arrive; false after kReplyTimeout.
  bool Fill() {
    auto deadline = std::chrono::steady_clock::now() + kReplyTimeout;
    for (;;) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 0) > 0) break;
      if (std::chrono::steady_clock::now() >= deadline) return false;
      run_loop_();
    }
    char tmp[65536];
    ssize_t n = ::recv(fd_, tmp, sizeof(tmp), 0);
    if (n <= 0) {
      closed_ = true;
      return false;
    }
    buf_.append(tmp, n);
    return true;
  }
  std::string ReadLine() {
    for (;;) {
      auto nl = buf_.find("\r\n");
      if (nl != std::string::npos) {
        std::string line = buf_.substr(0, nl);
        buf_.erase(0, nl + 2);
        return line;
      }
      if (!Fill()) return closed_ ? "<closed>" : "<timeout>";
    }
  }
  int fd_;
  std::string buf_;
  bool closed_ = false;
  std::function<void()> run_loop_;
};

enum class StoreTiming { kInline, kDeferred };

class FwpServerTest : public ::testing::TestWithParam<StoreTiming> {
 protected:
  void StartServer() {
    auto store = OpenStoreFromUrl("memory:", [](std::function<void()> f) { f(); });
    ASSERT_TRUE(store.ok());
    store_ = std::move(*store);
    if (GetParam() == StoreTiming::kDeferred) {
      store_ = std::make_unique<DeferredStore>(std::move(store_), [this](std::function<void()> f) {
        boost::asio::post(io_, [this, f = std::move(f)] {
          f();
          if (after_store_answer_) std::exchange(after_store_answer_, nullptr)();
        });
      });
    }
    engine_ = std::make_unique<Engine>(io_, *store_, config_, clock_, rng_);
    server_ = std::make_unique<FwpServer>(io_, *engine_, config_, rng_);
    server_->SetInfoSource([](FwpServer::InfoCallback cb) { cb(std::string("{}")); });
    ASSERT_TRUE(server_->Listen("127.0.0.1", 0).ok());
    engine_->Start();
  }
  void TearDown() override {
    if (!server_) return;
    server_->Stop();
    engine_->Stop();
    RunUntilIdle();
  }
  // Runs the loop until nothing is ready: the server has read what was sent, answered what it
  // can and armed its timers.
  void RunUntilIdle() {
    int handlers = 0;
    while (io_.poll() > 0) {
      ASSERT_LT(++handlers, 1'000'000) << "the server's loop never goes idle";
    }
  }
  // One step of the loop for a reader waiting for a reply: what is ready, or else a brief wait
  // for something to become ready.
  void RunLoopStep() {
    if (io_.poll() == 0) io_.run_one_for(10ms);
  }
  // Lets `d` pass on the server's clock once it has read what was sent and armed its timers.
  void Pass(Duration d) {
    RunUntilIdle();
    clock_.Advance(d);
    RunUntilIdle();
  }
  Conn Connect() {
    return Conn(server_->port(), [this] { RunLoopStep(); });
  }
  Conn Hello() {
    Conn c = Connect();
    EXPECT_EQ(c.Read(), "+HI {\"v\":2}");
    c.Send("HELLO {\"v\":2,\"hostname\":\"t\"}\r\n");
    EXPECT_EQ(c.Read(), "+OK");
    return c;
  }

  SimulatedClock clock_;  // before io_ and the server: outlives their timers
  Config config_;
  DefaultRng rng_{42};
  boost::asio::io_context io_;
  // The loop runs only while the test waits: keep it from stopping when it runs out of work.
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_{
      io_.get_executor()};
  std::unique_ptr<Store> store_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<FwpServer> server_;
  // Deferred store only: runs once, in the same turn of the loop, right after the store's next
  // answer has been handled (before any reply it produced is written).
  std::function<void()> after_store_answer_;
};

std::string TimingName(const ::testing::TestParamInfo<StoreTiming>& info) {
  return info.param == StoreTiming::kInline ? "Inline" : "Deferred";
}

INSTANTIATE_TEST_SUITE_P(StoreTimings, FwpServerTest,
                         ::testing::Values(StoreTiming::kInline, StoreTiming::kDeferred),
                         TimingName);

TEST_P(FwpServerTest, PushFetchAckTranscript) {
  config_.fetch_block_ms = 100;
  StartServer();
  Conn c = Hello();
  c.Send("PUSH {\"jid\":\"abcdefgh1\",\"jobtype\":\"t\",\"args\":[1]}\r\n");
  EXPECT_EQ(c.Read(), "+OK");
  c.Send("FETCH default\r\n");
  std::string job = c.Read();
  EXPECT_EQ(job.rfind("$", 0), 0u);
  EXPECT_NE(job.find("\"jid\":\"abcdefgh1\""), std::string::npos);
  c.Send("ACK {\"jid\":\"abcdefgh1\"}\r\n");
  EXPECT_EQ(c.Read(), "+OK");
  c.Send("FETCH default\r\n");
  Pass(99ms);
  EXPECT_TRUE(c.Quiet()) << "answered before the block time";
  Pass(1ms);
  EXPECT_EQ(c.Read(), "$-1") << "an empty queue answers null after the block time";
}

TEST_P(FwpServerTest, PipelinedCommandsAreAnsweredInOrder) {
  StartServer();
  Conn c = Hello();
  c.Send(
      "PUSH {\"jid\":\"pipe00001\",\"jobtype\":\"t\",\"args\":[]}\r\nBOGUS\r\n"
      "FETCH default\r\nACK {\"jid\":\"pipe00001\"}\r\nFAIL {\"jid\":\"pipe00001\"}\n");
  EXPECT_EQ(c.Read(), "+OK");
  EXPECT_EQ(c.Read(), "-ERR unknown command BOGUS");
  EXPECT_NE(c.Read().find("pipe00001"), std::string::npos);
  EXPECT_EQ(c.Read(), "+OK");
  EXPECT_EQ(c.Read(), "-ERR Job not found pipe00001");
}

TEST_P(FwpServerTest, BlockedFetchIsWokenByAPush) {
  config_.fetch_block_ms = 4000;
  StartServer();
  Conn worker = Hello();
  Conn producer = Hello();
  worker.Send("FETCH q1 q2\r\n");
  producer.Send("PUSH {\"jid\":\"wake00001\",\"jobtype\":\"t\",\"args\":[],\"queue\":\"q2\"}\r\n");
  EXPECT_EQ(producer.Read(), "+OK");
  EXPECT_NE(worker.Read().find("wake00001"), std::string::npos);
}

TEST_P(FwpServerTest, FetchTakesQueuesSeparatedByAnyRunOfSpacesAndTabs) {
  StartServer();
  Conn c = Hello();
  c.Send("PUSH {\"jid\":\"tabs00001\",\"jobtype\":\"t\",\"args\":[],\"queue\":\"q3\"}\r\n");
  EXPECT_EQ(c.Read(), "+OK");
  c.Send("FETCH  q1 \t q2\tq3 \r\n");
  EXPECT_NE(c.Read().find("tabs00001"), std::string::npos);
}

TEST_P(FwpServerTest, FirstLineMustBeHello) {
  StartServer();
  Conn c = Connect();
  EXPECT_EQ(c.Read(), "+HI {\"v\":2}");
  c.Send("PUSH {}\r\n");
  EXPECT_EQ(c.Read(), "<closed>");
}

TEST_P(FwpServerTest, EndAsTheFirstLineClosesWithoutAReply) {
  StartServer();
  Conn c = Connect();
  EXPECT_EQ(c.Read(), "+HI {\"v\":2}");
  c.Send("END\r\n");
  EXPECT_EQ(c.Read(), "<closed>");
}

TEST_P(FwpServerTest, AFirstHelloWithoutAJsonObjectClosesWithoutAReply) {
  StartServer();
  Conn c = Connect();
  EXPECT_EQ(c.Read(), "+HI {\"v\":2}");
  c.Send("HELLO v2\r\n");
  EXPECT_EQ(c.Read(), "<closed>");
}

TEST_P(FwpServerTest, ABlockingFetchHoldsTheLinesAfterIt) {
  config_.fetch_block_ms = 100;
  StartServer();
  Conn c = Hello();
  // FETCH may block: the PUSH behind it is read only once the FETCH is answered, so it cannot
  // wake that FETCH.
  c.Send(
      "FETCH held\r\nPUSH {\"jid\":\"barrier01\",\"jobtype\":\"t\",\"args\":[],"
      "\"queue\":\"held\"}\r\n");
  Pass(100ms);
  EXPECT_EQ(c.Read(), "$-1");
  EXPECT_EQ(c.Read(), "+OK");
}

TEST_P(FwpServerTest, PipelinedFetchesWaitTogether) {
  config_.fetch_block_ms = 100;
  StartServer();
  Conn c = Hello();
  // The second FETCH does not wait for the first: both reach the engine at once and both end
  // their block time together (behind a barrier the second would answer at 200 ms).
  c.Send("FETCH none\r\nFETCH none\r\n");
  Pass(99ms);
  EXPECT_TRUE(c.Quiet()) << "answered before the block time";
  Pass(1ms);
  EXPECT_EQ(c.Read(), "$-1");
  EXPECT_EQ(c.Read(), "$-1");
}

TEST_P(FwpServerTest, AtMost128PipelinedFetchesWaitTogether) {
  config_.fetch_block_ms = 100;
  StartServer();
  Conn c = Hello();
  // Each waiting FETCH holds a waiter in the engine: past 128 on one connection, the next waits
  // for them as any other line does.
  std::string lines;
  for (int i = 0; i < 129; ++i) lines += "FETCH none\r\n";
  c.Send(lines);
  Pass(100ms);
  for (int i = 0; i < 128; ++i) ASSERT_EQ(c.Read(), "$-1") << "FETCH " << i;
  Pass(99ms);
  EXPECT_TRUE(c.Quiet()) << "the 129th FETCH started with the others";
  Pass(1ms);
  EXPECT_EQ(c.Read(), "$-1");
}

TEST_P(FwpServerTest, PipelinedFetchesAreAnsweredInOrder) {
  config_.fetch_block_ms = 100;
  StartServer();
  Conn producer = Hello();
  producer.Send(
      "PUSH {\"jid\":\"order0001\",\"jobtype\":\"t\",\"args\":[],\"queue\":\"full\"}\r\n");
  EXPECT_EQ(producer.Read(), "+OK");
  Conn c = Hello();
  // The second FETCH gets its job at once; its reply waits for the first's.
  c.Send("FETCH empty\r\nFETCH full\r\n");
  Pass(99ms);
  EXPECT_TRUE(c.Quiet()) << "a reply overtook the FETCH before it";
  Pass(1ms);
  EXPECT_EQ(c.Read(), "$-1");
  EXPECT_NE(c.Read().find("order0001"), std::string::npos);
}

TEST_P(FwpServerTest, ACommandBehindPipelinedFetchesWaitsForAllOfThem) {
  config_.fetch_block_ms = 100;
  StartServer();
  Conn c = Hello();
  c.Send(
      "FETCH held\r\nFETCH held\r\nPUSH {\"jid\":\"behind001\",\"jobtype\":\"t\",\"args\":[],"
      "\"queue\":\"held\"}\r\nFETCH held\r\n");
  Pass(100ms);
  EXPECT_EQ(c.Read(), "$-1") << "the PUSH ran before the FETCHes ahead of it were answered";
  EXPECT_EQ(c.Read(), "$-1");
  EXPECT_EQ(c.Read(), "+OK");
  EXPECT_NE(c.Read().find("behind001"), std::string::npos) << "the FETCH after the PUSH";
}

// A client sends `lines` (FETCHes on queue q, and what follows them) and closes without reading;
// a job pushed afterwards must go to another worker's FETCH, not to one of the closed client's.
class ClosedClientTest : public FwpServerTest {
 protected:
  void ExpectNoJobLostTo(const std::string& lines) {
    config_.fetch_block_ms = 4000;
    StartServer();
    {
      Conn gone = Hello();
      gone.Send(lines);
      Pass(1ms);
    }
    Pass(1ms);
    Conn producer = Hello();
    producer.Send("PUSH {\"jid\":\"kept00001\",\"jobtype\":\"t\",\"args\":[],\"queue\":\"q\"}\r\n");
    EXPECT_EQ(producer.Read(), "+OK");
    Conn worker = Hello();
    worker.Send("FETCH q\r\n");
    EXPECT_NE(worker.Read().find("kept00001"), std::string::npos)
        << "the job went to a FETCH of the closed connection";
  }
};

TEST_P(ClosedClientTest, ClosingWithPipelinedFetchesWaitingLosesNoJob) {
  ExpectNoJobLostTo("FETCH q\r\nFETCH q\r\nFETCH q\r\n");
}

TEST_P(ClosedClientTest, ClosingBehindAWaitingFetchLosesNoJob) {
  // The BEAT waits for the FETCH; the close behind it is still noticed, and the FETCH withdrawn.
  ExpectNoJobLostTo("FETCH q\r\nBEAT {\"wid\":\"nobody\"}\r\n");
}

INSTANTIATE_TEST_SUITE_P(StoreTimings, ClosedClientTest,
                         ::testing::Values(StoreTiming::kInline, StoreTiming::kDeferred),
                         TimingName);

TEST_P(FwpServerTest, AWorkerDroppedRightAfterItsFetchWasAnsweredStillGetsTheJob) {
  if (GetParam() == StoreTiming::kInline)
    GTEST_SKIP() << "needs the store's answer on its own turn";
  StartServer();
  Conn producer = Hello();
  producer.Send("PUSH {\"jid\":\"handed001\",\"jobtype\":\"t\",\"args\":[],\"queue\":\"q\"}\r\n");
  EXPECT_EQ(producer.Read(), "+OK");
  Conn worker = Connect();
  worker.Read();
  worker.Send("HELLO {\"v\":2,\"wid\":\"w1\",\"pid\":1,\"labels\":[]}\r\n");
  EXPECT_EQ(worker.Read(), "+OK");
  // The reaper drops w1 in the turn its FETCH is answered, before the reply is written (a node
  // resumed after a pause finds every worker silent while their answers are due).
  after_store_answer_ = [this] { server_->CloseWorker("w1"); };
  worker.Send("FETCH q\r\n");
  EXPECT_NE(worker.Read().find("handed001"), std::string::npos)
      << "the job reserved for the FETCH never reached the worker";
  EXPECT_EQ(worker.Read(), "<closed>");
}

TEST_P(FwpServerTest, ADroppedWorkersWaitingFetchGoesBackAndTheConnectionCloses) {
  config_.fetch_block_ms = 60'000;
  StartServer();
  Conn worker = Connect();
  worker.Read();
  worker.Send("HELLO {\"v\":2,\"wid\":\"w1\",\"pid\":1,\"labels\":[]}\r\n");
  EXPECT_EQ(worker.Read(), "+OK");
  worker.Send("FETCH q\r\n");
  Pass(1ms);
  server_->CloseWorker("w1");
  EXPECT_EQ(worker.Read(), "<closed>");
  Conn producer = Hello();
  producer.Send("PUSH {\"jid\":\"after0001\",\"jobtype\":\"t\",\"args\":[],\"queue\":\"q\"}\r\n");
  EXPECT_EQ(producer.Read(), "+OK");
  Conn other = Hello();
  other.Send("FETCH q\r\n");
  EXPECT_NE(other.Read().find("after0001"), std::string::npos)
      << "the job went to the dropped worker's withdrawn FETCH";
}

TEST_P(FwpServerTest, HandshakeTimeout) {
  config_.handshake_timeout_seconds = 1;
  StartServer();
  Conn c = Connect();
  EXPECT_EQ(c.Read(), "+HI {\"v\":2}");
  Pass(999ms);
  EXPECT_TRUE(c.Quiet()) << "timed out early";
  Pass(1ms);
  EXPECT_EQ(c.Read(), "-ERR handshake timeout: HELLO not received within 1 s");
  EXPECT_EQ(c.Read(), "<closed>");
}

TEST_P(FwpServerTest, LineTooLongClosesWithError) {
  config_.max_line_bytes = 1024;
  StartServer();
  Conn c = Hello();
  c.Send("PUSH " + std::string(2000, 'x') + "\r\n");
  EXPECT_EQ(c.Read(), "-ERR line too long: limit is 1024 bytes");
  EXPECT_EQ(c.Read(), "<closed>");
}

TEST_P(FwpServerTest, PartialLineTimesOut) {
  config_.line_timeout_seconds = 1;
  StartServer();
  Conn c = Hello();
  c.Send("PUSH {\"jid\":");
  Pass(999ms);
  EXPECT_TRUE(c.Quiet()) << "timed out early";
  Pass(1ms);
  EXPECT_EQ(c.Read(), "-ERR timed out waiting for the end of the command line");
  EXPECT_EQ(c.Read(), "<closed>");
}

TEST_P(FwpServerTest, PartialLineStillArrivingKeepsItsConnection) {
  config_.line_timeout_seconds = 1;
  StartServer();
  Conn c = Hello();
  c.NoDelay();
  c.Send("PUSH {\"jid\":\"a-slowly-sent-job\",\"jobtype\":\"A\",\"args\":[\"");
  Pass(0ms);  // read, and the line timer armed
  // Three periods of the timeout, each bringing 2 KiB of the line (past 1 KiB/s): no timeout.
  for (int i = 0; i < 3; ++i) {
    c.Send(std::string(2048, 'x'));
    Pass(1000ms);
    ASSERT_TRUE(c.Quiet()) << "timed out although the line kept arriving (period " << i
                           << "): " << c.Read();
  }
  c.Send("\"]}\r\n");
  EXPECT_EQ(c.Read(), "+OK");
  // A period that brings less than 1 KiB/s ends it.
  c.Send("PUSH {\"jid\":");
  Pass(1000ms);
  EXPECT_EQ(c.Read(), "-ERR timed out waiting for the end of the command line");
  EXPECT_EQ(c.Read(), "<closed>");
}

TEST_P(FwpServerTest, ConnectionLimit) {
  config_.max_connections = 1;
  StartServer();
  Conn first = Hello();
  Conn second = Connect();
  EXPECT_EQ(second.Read(), "+HI {\"v\":2}");
  second.Send("HELLO {\"v\":2}\r\n");
  EXPECT_EQ(second.Read(), "-ERR too many connections: limit is 1");
  EXPECT_EQ(second.Read(), "<closed>");
  first.Send("INFO\r\n");
  EXPECT_EQ(first.Read().rfind("$", 0), 0u) << "the first connection keeps working";
}

TEST_P(FwpServerTest, PasswordHandshake) {
  config_.password = "sekret";
  StartServer();
  for (bool right : {true, false}) {
    Conn c = Connect();
    std::string hi = c.Read();
    ASSERT_EQ(hi.rfind("+HI {\"v\":2,\"i\":", 0), 0u) << hi;
    EXPECT_EQ(hi.find(' ', 4), std::string::npos) << "no spaces in the greeting JSON";
    auto i_pos = hi.find("\"i\":") + 4;
    int iterations = std::stoi(hi.substr(i_pos));
    auto s_pos = hi.find("\"s\":\"") + 5;
    std::string salt = hi.substr(s_pos, hi.find('"', s_pos) - s_pos);
    EXPECT_GE(iterations, 4000);
    EXPECT_LE(iterations, 8095);
    std::string hash = PasswordHash(right ? "sekret" : "wrong", salt, iterations);
    c.Send("HELLO {\"v\":2,\"pwdhash\":\"" + hash + "\"}\r\n");
    if (right) {
      EXPECT_EQ(c.Read(), "+OK");
    } else {
      EXPECT_EQ(c.Read(), "-ERR Invalid password");
      EXPECT_EQ(c.Read(), "<closed>");
    }
  }
}

TEST_P(FwpServerTest, BeatAndWorkerStates) {
  StartServer();
  Conn c = Connect();
  c.Read();
  c.Send("HELLO {\"v\":2,\"wid\":\"w1\",\"pid\":1,\"labels\":[]}\r\n");
  EXPECT_EQ(c.Read(), "+OK");
  c.Send("BEAT {\"wid\":\"w1\"}\r\n");
  EXPECT_EQ(c.Read(), "+OK");
  c.Send("BEAT {\"wid\":\"nobody\"}\r\n");
  EXPECT_EQ(c.Read(), "-ERR unknown worker nobody");
  c.Send("BEAT {\"wid\":\"w1\",\"current_state\":\"quiet\"}\r\n");
  EXPECT_EQ(c.Read(), "$17 {\"state\":\"quiet\"}");
  c.Send("END\r\n");
  EXPECT_EQ(c.Read(), "<closed>");
}

TEST_P(FwpServerTest, QueueCommands) {
  config_.fetch_block_ms = 100;
  StartServer();
  Conn c = Hello();
  c.Send("PUSH {\"jid\":\"queue0001\",\"jobtype\":\"t\",\"args\":[],\"queue\":\"p\"}\r\n");
  EXPECT_EQ(c.Read(), "+OK");
  c.Send("QUEUE PAUSE p\r\nFETCH p\r\nQUEUE RESUME p\r\nQUEUE LATENCY p\r\nQUEUE\r\n");
  Pass(100ms);
  EXPECT_EQ(c.Read(), "+OK");
  EXPECT_EQ(c.Read(), "$-1");
  EXPECT_EQ(c.Read(), "+OK");
  EXPECT_EQ(c.Read().rfind("$", 0), 0u);
  EXPECT_EQ(c.Read(), "-ERR QUEUE needs a subcommand: PAUSE, RESUME, REMOVE or LATENCY");
  c.Send("QUEUE REMOVE p\r\nFETCH p\r\n");
  Pass(100ms);
  EXPECT_EQ(c.Read(), "+OK");
  EXPECT_EQ(c.Read(), "$-1");
}

TEST_P(FwpServerTest, FetchSkipsNamesThatCannotBeQueues) {
  config_.fetch_block_ms = 100;
  StartServer();
  Conn c = Hello();
  c.Send("PUSH {\"jid\":\"fetchbad1\",\"jobtype\":\"t\",\"args\":[]}\r\n");
  EXPECT_EQ(c.Read(), "+OK");
  c.Send("FETCH bad:name default\r\n");
  EXPECT_NE(c.Read().find("\"jid\":\"fetchbad1\""), std::string::npos);
  c.Send("FETCH bad:name ~deliveries\r\n");
  Pass(100ms);
  EXPECT_EQ(c.Read(), "$-1") << "only invalid names: the block time, then null";
}

TEST_P(FwpServerTest, QueueSubcommandsAreCaseInsensitiveAndLatencyRefusesWildcards) {
  config_.fetch_block_ms = 100;
  StartServer();
  Conn c = Hello();
  c.Send("QUEUE pause p\r\nQUEUE Resume p\r\nqueue latency p\r\nQUEUE latency default foo\r\n");
  EXPECT_EQ(c.Read(), "+OK");
  EXPECT_EQ(c.Read(), "+OK");
  EXPECT_EQ(c.Read(), "-ERR unknown command queue") << "verbs stay upper case";
  std::string latency = c.Read();
  EXPECT_NE(latency.find("{\"default\":0"), std::string::npos) << latency;
  EXPECT_NE(latency.find(",\"foo\":0"), std::string::npos) << latency;
  c.Send("QUEUE LATENCY *\r\nQUEUE latency default *\r\nQUEUE UNPAUSE *\r\nQUEUE pause\r\n");
  EXPECT_EQ(c.Read(), "-ERR QUEUE LATENCY does not support wildcards");
  EXPECT_EQ(c.Read(), "-ERR QUEUE LATENCY does not support wildcards");
  EXPECT_EQ(c.Read(), "-ERR no such QUEUE subcommand: UNPAUSE (PAUSE, RESUME, REMOVE or LATENCY)");
  EXPECT_EQ(c.Read(), "-ERR QUEUE PAUSE needs at least one queue name");
}

TEST_P(FwpServerTest, FaktorysErrorTexts) {
  StartServer();
  Conn c = Hello();
  c.Send("ACK {}\r\nACK [1]\r\nACK {\"jid\":5}\r\nACK {\"jid\":\"\"}\r\n");
  EXPECT_EQ(c.Read(), "-ERR invalid ACK {}: ACK needs a JSON object with a jid string");
  EXPECT_EQ(c.Read(), "-ERR invalid ACK [1]: ACK needs a JSON object with a jid string");
  EXPECT_EQ(c.Read(), "-ERR invalid ACK {\"jid\":5}: ACK needs a JSON object with a jid string");
  EXPECT_EQ(c.Read(), "+OK") << "an empty jid is an unknown one";
  std::string long_ack = "{\"x\":\"" + std::string(300, 'a') + "\"}";
  c.Send("ACK " + long_ack + "\r\n");
  EXPECT_EQ(c.Read(), "-ERR invalid ACK " + long_ack.substr(0, 200) +
                          "...: ACK needs a JSON object with a jid string");
  c.Send("FAIL {}\r\nFAIL {\"jid\":\"\"}\r\nFAIL []\r\n");
  EXPECT_EQ(c.Read(), "-ERR missing JID");
  EXPECT_EQ(c.Read(), "-ERR missing JID");
  EXPECT_EQ(c.Read(), "-ERR invalid FAIL []: FAIL needs a JSON object");
  c.Send(
      "MUTATE {\"cmd\":\"explode\",\"target\":\"retries\"}\r\n"
      "MUTATE {\"cmd\":\"clear\",\"target\":\"everything\"}\r\n");
  EXPECT_EQ(c.Read(), "-ERR unknown mutate operation: explode (clear, kill, discard or requeue)");
  EXPECT_EQ(c.Read(),
            "-ERR invalid target for mutation command: everything (scheduled, retries or dead)");
  c.Send("BATCH NEW {}\r\nTRACK GET x\r\n");
  EXPECT_EQ(c.Read(),
            "-ERR BATCH NEW needs a success or complete callback job (neither was given)");
  EXPECT_EQ(c.Read(), "$45 {\"jid\":\"x\",\"state\":\"unknown\",\"updated_at\":\"\"}");
  c.Send("ACK {\"jid\":1e400}\r\n");
  EXPECT_EQ(c.Read().rfind("-ERR invalid JSON: number overflow", 0), 0u)
      << "JSON that does not parse keeps the general text";
}

TEST_P(FwpServerTest, PushIsIdempotentAndFillsInRetry) {
  config_.fetch_block_ms = 100;
  config_.jobtypes["slow"].retry = 3;
  StartServer();
  Conn c = Hello();
  c.Send("PUSH {\"jid\":\"idem00001\",\"jobtype\":\"t\",\"args\":[1],\"at\":\"\"}\r\n");
  EXPECT_EQ(c.Read(), "+OK");
  c.Send("PUSH {\"jid\":\"idem00001\",\"jobtype\":\"t\",\"args\":[2]}\r\n");
  EXPECT_EQ(c.Read(), "+OK") << "a jid the server holds: OK, nothing changes";
  c.Send(
      "PUSHB [{\"jid\":\"idem00001\",\"jobtype\":\"t\",\"args\":[3]},"
      "{\"jid\":\"idem00002\",\"jobtype\":\"slow\",\"args\":[],\"retry\":null},"
      "{\"jid\":\"idem00002\",\"jobtype\":\"slow\",\"args\":[]}]\r\n");
  EXPECT_EQ(c.Read(), "$2 {}");
  c.Send("FETCH default\r\nFETCH default\r\nFETCH default\r\n");
  Pass(100ms);
  std::string first = c.Read();
  EXPECT_NE(first.find("\"args\":[1]"), std::string::npos) << first;
  EXPECT_NE(first.find("\"retry\":25"), std::string::npos) << first;
  EXPECT_EQ(first.find("\"at\""), std::string::npos) << "\"at\":\"\" is dropped: " << first;
  std::string second = c.Read();
  EXPECT_NE(second.find("\"jid\":\"idem00002\""), std::string::npos) << second;
  EXPECT_NE(second.find("\"retry\":3"), std::string::npos) << "the jobtype's default: " << second;
  EXPECT_EQ(c.Read(), "$-1") << "no second copy of either";
  EXPECT_EQ(engine_->push_duplicates(), 3u);
}

TEST_P(FwpServerTest, PushbKeepsEachJobsOwnText) {
  config_.fetch_block_ms = 100;
  StartServer();
  Conn c = Hello();
  c.Send(
      "PUSHB [ {\"jid\":\"text00001\", \"jobtype\":\"t\",\"args\":[\"a,]}\"],"
      "\"created_at\":\"2020-01-01T00:00:00Z\",\"retry\":2} ,"
      "{\"jid\":\"text00002\",\"jobtype\":\"t\",\"args\":[{\"b\":[1.50]}],"
      "\"created_at\":\"2020-01-01T00:00:00Z\",\"retry\":2}]\r\n");
  EXPECT_EQ(c.Read(), "$2 {}");
  c.Send("FETCH default\r\nFETCH default\r\n");
  Pass(100ms);
  std::string enqueued = ",\"queue\":\"default\",\"enqueued_at\":\"";
  std::string first = c.Read();
  EXPECT_EQ(first.rfind("$", 0), 0u) << first;
  EXPECT_NE(first.find(" {\"jid\":\"text00001\", \"jobtype\":\"t\",\"args\":[\"a,]}\"],"
                       "\"created_at\":\"2020-01-01T00:00:00Z\",\"retry\":2" +
                       enqueued),
            std::string::npos)
      << first;
  std::string second = c.Read();
  EXPECT_NE(second.find(" {\"jid\":\"text00002\",\"jobtype\":\"t\",\"args\":[{\"b\":[1.50]}],"
                        "\"created_at\":\"2020-01-01T00:00:00Z\",\"retry\":2" +
                        enqueued),
            std::string::npos)
      << second;
}

}  // namespace
}  // namespace bulkhead
