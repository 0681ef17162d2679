#include "bulkhead/transport/curl_transport.h"

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <algorithm>
#include <boost/asio.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bulkhead/transport/testing/test_certificates.h"
#include "bulkhead/transport/testing/test_server.h"

namespace bulkhead {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;
using testing::TestServer;

// Generous slack for "ends after its deadline and before deadline + slack" (sanitizer builds and a
// loaded 2-core machine included).
constexpr milliseconds kSlack{2500};
// Upper bound for any single wait in these tests; hitting it is a failure, not a pass.
constexpr milliseconds kWaitLimit{15'000};

class CurlTransportTest : public ::testing::Test {
 protected:
  void MakeTransport(TransportOptions options) {
    transport_.reset();
    Result<std::unique_ptr<CurlTransport>> t = CurlTransport::Create(io_, std::move(options));
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    transport_ = std::move(*t);
  }
  void MakeOpenTransport() { MakeTransport(OpenOptions()); }
  // Options for tests against local servers: private targets and plain http allowed.
  static TransportOptions OpenOptions() {
    TransportOptions o;
    o.ssrf.allow_private_targets = true;
    return o;
  }
  static TransportOptions OpenOptionsWithCa(const std::string& ca_file) {
    TransportOptions o = OpenOptions();
    o.ca_file = ca_file;
    return o;
  }

  // Runs the loop until `done()` holds; fails the test with `what` if the bound passes first.
  template <typename Pred>
  bool RunUntil(Pred done, const std::string& what, milliseconds limit = kWaitLimit) {
    Clock::time_point end = Clock::now() + limit;
    while (!done()) {
      if (Clock::now() > end) {
        ADD_FAILURE() << "timed out after " << limit.count() << " ms waiting for: " << what;
        return false;
      }
      io_.restart();
      io_.run_one_for(milliseconds(20));
    }
    return true;
  }

  struct Outcome {
    HttpResponse response;
    milliseconds elapsed{0};
  };

  Outcome Fetch(HttpRequest request) {
    std::optional<HttpResponse> got;
    Clock::time_point start = Clock::now();
    Clock::time_point finished;
    std::string url = request.url;
    transport_->Send(std::move(request), [&](HttpResponse r) {
      got = std::move(r);
      finished = Clock::now();
    });
    if (!RunUntil([&] { return got.has_value(); }, "response from " + url)) return {};
    return {std::move(*got), std::chrono::duration_cast<milliseconds>(finished - start)};
  }

  static HttpRequest Get(const std::string& url) {
    HttpRequest r;
    r.url = url;
    r.deadlines.connect = milliseconds(2000);
    r.deadlines.first_byte = milliseconds(3000);
    r.deadlines.total = milliseconds(5000);
    return r;
  }

  boost::asio::io_context io_;
  std::unique_ptr<CurlTransport> transport_;
};

#define EXPECT_ERROR(outcome, kind)                                    \
  EXPECT_EQ(std::string(TransportErrorName((outcome).response.error)), \
            std::string(TransportErrorName(kind)))                     \
      << (outcome).response.error_message

TEST_F(CurlTransportTest, HealthyHostAnswers200WithBody) {
  TestServer server({});
  MakeOpenTransport();
  Outcome o = Fetch(Get(server.Url("/ok")));
  EXPECT_ERROR(o, TransportError::kNone);
  EXPECT_EQ(o.response.status, 200);
  EXPECT_EQ(o.response.body, "hello");
  EXPECT_EQ(o.response.Header("content-length"), "5");
  EXPECT_EQ(o.response.remote_address, "127.0.0.1");
  EXPECT_GT(o.response.timings.total.count(), 0);
  EXPECT_LE(o.response.timings.connect, o.response.timings.first_byte);
  EXPECT_LE(o.response.timings.first_byte, o.response.timings.total);
  EXPECT_EQ(transport_->InFlight(), 0u);
}

TEST_F(CurlTransportTest, PostSendsBodyAndHeaders) {
  TestServer server({});
  MakeOpenTransport();
  HttpRequest r = Get(server.Url("/echo"));
  r.method = "POST";
  r.body = std::string(5000, 'p');  // large enough that curl would otherwise send Expect
  r.headers.push_back({"X-Test", "abc"});
  Outcome o = Fetch(r);
  EXPECT_ERROR(o, TransportError::kNone);
  EXPECT_EQ(o.response.body, "POST " + std::string(5000, 'p'));
  EXPECT_EQ(o.response.Header("X-Echo"), "abc");

  r.method = "PUT";
  r.body = "x";
  EXPECT_EQ(Fetch(r).response.body, "PUT x");
}

TEST_F(CurlTransportTest, ConnectionsAreReusedPerHost) {
  TestServer server({});
  MakeOpenTransport();
  for (int i = 0; i < 5; ++i) {
    Outcome o = Fetch(Get(server.Url("/ok")));
    ASSERT_EQ(o.response.status, 200) << o.response.error_message;
  }
  EXPECT_EQ(server.requests(), 5);
  EXPECT_EQ(server.accepted(), 1) << "sequential requests should share one keep-alive connection";
}

TEST_F(CurlTransportTest, IdleOriginsAreRetiredWithTheirConnections) {
  TestServer a({});
  TestServer b({});
  TransportOptions options = OpenOptions();
  options.idle_origin_timeout = milliseconds(100);
  MakeTransport(options);
  ASSERT_EQ(Fetch(Get(a.Url("/ok"))).response.status, 200);
  ASSERT_EQ(Fetch(Get(b.Url("/ok"))).response.status, 200);
  EXPECT_EQ(transport_->ActiveOrigins(), 2u);
  EXPECT_EQ(transport_->OpenSockets(), 2u);  // one idle keep-alive connection per origin
  RunUntil([&] { return transport_->ActiveOrigins() == 0; }, "idle origins to be retired");
  EXPECT_EQ(transport_->OpenSockets(), 0u);
  // A retired origin comes back on the next request.
  ASSERT_EQ(Fetch(Get(a.Url("/ok"))).response.status, 200);
  EXPECT_EQ(a.accepted(), 2);
}

TEST_F(CurlTransportTest, ServerErrorIsAResponseNotATransportError) {
  TestServer server({});
  MakeOpenTransport();
  Outcome o = Fetch(Get(server.Url("/status/500")));
  EXPECT_ERROR(o, TransportError::kNone);
  EXPECT_EQ(o.response.status, 500);
  EXPECT_EQ(o.response.body, "status 500");
}

TEST_F(CurlTransportTest, TooManyRequestsExposesRetryAfter) {
  TestServer server({});
  MakeOpenTransport();
  Outcome o = Fetch(Get(server.Url("/status/429")));
  EXPECT_ERROR(o, TransportError::kNone);
  EXPECT_EQ(o.response.status, 429);
  EXPECT_EQ(o.response.Header("retry-after"), "7");
}

TEST_F(CurlTransportTest, NeverAnsweringHostHitsFirstByteDeadline) {
  TestServer server({});
  MakeOpenTransport();
  HttpRequest r = Get(server.Url("/never"));
  r.deadlines.first_byte = milliseconds(300);
  Outcome o = Fetch(r);
  EXPECT_ERROR(o, TransportError::kTimeoutFirstByte);
  EXPECT_GE(o.elapsed, milliseconds(300));
  EXPECT_LT(o.elapsed, milliseconds(300) + kSlack);
  EXPECT_EQ(o.response.status, 0);
}

TEST_F(CurlTransportTest, AnswerLaterThanTotalDeadlineTimesOut) {
  TestServer server({.delay = milliseconds(10'000)});
  MakeOpenTransport();
  HttpRequest r = Get(server.Url("/slow"));
  r.deadlines.first_byte = milliseconds(0);  // off: only the total deadline applies
  r.deadlines.total = milliseconds(500);
  Outcome o = Fetch(r);
  EXPECT_ERROR(o, TransportError::kTimeoutTotal);
  EXPECT_GE(o.elapsed, milliseconds(500));
  EXPECT_LT(o.elapsed, milliseconds(500) + kSlack);
}

TEST_F(CurlTransportTest, DrippingHostIsCutByLowSpeedLimit) {
  TestServer server({.drip_interval = milliseconds(100)});
  MakeOpenTransport();
  HttpRequest r = Get(server.Url("/drip"));
  r.deadlines.total = milliseconds(10'000);
  r.deadlines.low_speed_limit = 1000;  // bytes/s; the server sends ~10
  r.deadlines.low_speed_time = std::chrono::seconds(1);
  Outcome o = Fetch(r);
  EXPECT_ERROR(o, TransportError::kLowSpeed);
  EXPECT_GE(o.elapsed, milliseconds(1000));
  EXPECT_LT(o.elapsed, milliseconds(1000) + kSlack);
  EXPECT_EQ(o.response.status, 200);  // the headers had arrived
}

TEST_F(CurlTransportTest, ClosedPortIsConnectRefused) {
  uint16_t port;
  {
    boost::asio::ip::tcp::acceptor a(io_, {boost::asio::ip::make_address("127.0.0.1"), 0});
    port = a.local_endpoint().port();
  }  // closed: nothing listens there now
  MakeOpenTransport();
  Outcome o = Fetch(Get("http://127.0.0.1:" + std::to_string(port) + "/"));
  EXPECT_ERROR(o, TransportError::kConnectRefused);
}

TEST_F(CurlTransportTest, ResetConnectionIsReset) {
  TestServer server({});
  MakeOpenTransport();
  Outcome o = Fetch(Get(server.Url("/reset")));
  EXPECT_ERROR(o, TransportError::kReset);
}

TEST_F(CurlTransportTest, CloseWithoutReplyIsReset) {
  TestServer server({});
  MakeOpenTransport();
  Outcome o = Fetch(Get(server.Url("/close")));
  EXPECT_ERROR(o, TransportError::kReset);
}

TEST_F(CurlTransportTest, LargeBodyIsCappedAndMarkedTruncated) {
  TestServer server({});
  TransportOptions options = OpenOptions();
  options.max_body_bytes = 1000;
  options.max_drain_bytes = 100 * 1024;
  MakeTransport(options);
  Outcome o = Fetch(Get(server.Url("/big")));
  EXPECT_ERROR(o, TransportError::kNone);
  EXPECT_EQ(o.response.status, 200);
  EXPECT_EQ(o.response.body, std::string(1000, 'b'));
  EXPECT_TRUE(o.response.body_truncated);

  options.max_drain_bytes = TransportOptions().max_drain_bytes;
  MakeTransport(options);
  o = Fetch(Get(server.Url("/big")));  // under the drain limit: read to the end, kept 1000
  EXPECT_ERROR(o, TransportError::kNone);
  EXPECT_EQ(o.response.body.size(), 1000u);
  EXPECT_TRUE(o.response.body_truncated);
}

TEST_F(CurlTransportTest, RedirectsAreReturnedUnlessAsked) {
  TestServer server({});
  MakeOpenTransport();
  Outcome o = Fetch(Get(server.Url("/redirect")));
  EXPECT_EQ(o.response.status, 302);
  EXPECT_EQ(o.response.Header("location"), "/ok");

  HttpRequest r = Get(server.Url("/redirect"));
  r.follow_redirects = true;
  o = Fetch(r);
  EXPECT_ERROR(o, TransportError::kNone);
  EXPECT_EQ(o.response.status, 200);
  EXPECT_EQ(o.response.body, "hello");
  EXPECT_EQ(o.response.redirects_followed, 1);
}

TEST_F(CurlTransportTest, RedirectLoopStopsAfterThreeHops) {
  TestServer::Options options;
  options.redirect_location = "/redirect";
  TestServer server(options);
  MakeOpenTransport();
  HttpRequest r = Get(server.Url("/redirect"));
  r.follow_redirects = true;
  Outcome o = Fetch(r);
  EXPECT_ERROR(o, TransportError::kTooManyRedirects);
  EXPECT_EQ(o.response.status, 302);
  EXPECT_EQ(o.response.redirects_followed, 3);
  EXPECT_EQ(server.requests(), 4);
}

class TlsTest : public CurlTransportTest {
 protected:
  static void SetUpTestSuite() {
    certs_ = new testing::TestCertificates(testing::MakeTestCertificates("bulkhead test CA"));
    other_ = new testing::TestCertificates(testing::MakeTestCertificates("unrelated CA"));
  }
  static void TearDownTestSuite() {
    delete certs_;
    delete other_;
  }
  static TestServer::Options TlsOptions() {
    return {.tls = true, .cert_pem = certs_->cert_pem, .key_pem = certs_->key_pem};
  }
  static testing::TestCertificates* certs_;
  static testing::TestCertificates* other_;
};
testing::TestCertificates* TlsTest::certs_ = nullptr;
testing::TestCertificates* TlsTest::other_ = nullptr;

TEST_F(TlsTest, VerifiedTlsAnswers200) {
  TestServer server(TlsOptions());
  testing::TempFile ca(certs_->ca_pem);
  MakeTransport(OpenOptionsWithCa(ca.path()));
  Outcome o = Fetch(Get(server.Url("/ok")));
  EXPECT_ERROR(o, TransportError::kNone);
  EXPECT_EQ(o.response.status, 200);
  EXPECT_EQ(o.response.body, "hello");
  // By name too: "localhost" is in the certificate and resolves through the resolver pool.
  o = Fetch(Get("https://localhost:" + std::to_string(server.port()) + "/ok"));
  EXPECT_ERROR(o, TransportError::kNone);
  EXPECT_EQ(o.response.status, 200);
}

// A second delivery to a host seen before costs no full handshake: its TLS session is kept per
// origin (curl_tls_sessions.cc), across connections, easy handles and the origin's multi handle.
// One request to `server`; the idle origin is retired (its multi handle and connection closed);
// then, while a slow request to another host holds the easy handle the first request used, a
// second request to `server`: a new connection on an easy handle that never connected there. The
// server counts abbreviated handshakes (SSL_session_reused).
struct Handshakes {
  int total = 0;
  int resumed = 0;
};

class TlsSessionTest : public TlsTest {
 protected:
  Handshakes SecondConnectionOnANewHandle(size_t max_tls_session_origins) {
    TestServer server(TlsOptions());
    TestServer::Options slow_options;
    slow_options.delay = milliseconds(1000);
    TestServer other(slow_options);
    testing::TempFile ca(certs_->ca_pem);
    TransportOptions options = OpenOptionsWithCa(ca.path());
    options.idle_origin_timeout = milliseconds(100);
    options.max_tls_session_origins = max_tls_session_origins;
    MakeTransport(options);
    EXPECT_EQ(Fetch(Get(server.Url("/ok"))).response.status, 200);
    RunUntil([&] { return transport_->ActiveOrigins() == 0; }, "the idle origin to be retired");
    std::optional<HttpResponse> slow;
    transport_->Send(Get(other.Url("/slow")), [&](HttpResponse r) { slow = std::move(r); });
    RunUntil([&] { return other.requests() == 1; }, "the slow request to hold its handle");
    EXPECT_EQ(Fetch(Get(server.Url("/ok"))).response.status, 200);
    RunUntil([&] { return slow.has_value(); }, "the slow answer");
    EXPECT_EQ(slow->status, 200) << slow->error_message;
    EXPECT_EQ(server.accepted(), 2) << "the second request needs a new connection";
    return {server.handshakes(), server.resumed()};
  }
};

TEST_F(TlsSessionTest, ANewConnectionToAHostSeenBeforeResumesItsTlsSession) {
  Handshakes h = SecondConnectionOnANewHandle(TransportOptions{}.max_tls_session_origins);
  EXPECT_EQ(h.total, 2);
  EXPECT_EQ(h.resumed, 1) << "the second connection should resume the first's session";
}

// Without kept sessions (max_tls_session_origins 0) a new easy handle has no session to offer:
// a full handshake. What the test above would see without the per-origin share.
TEST_F(TlsSessionTest, WithoutKeptSessionsANewHandleMakesAFullHandshake) {
  Handshakes h = SecondConnectionOnANewHandle(0);
  EXPECT_EQ(h.total, 2);
  EXPECT_EQ(h.resumed, 0);
}

// With more origins in use at once than max_tls_session_origins, none of their caches may be
// dropped, the newest included, and a new origin must not walk all of them every time (15,000
// hosts in flight made that quadratic on the loop). 64 origins whose handshakes hang, 2 kept.
TEST_F(CurlTransportTest, TlsSessionScansStayAmortizedWhileEveryOriginIsInUse) {
  constexpr int kOrigins = 64;
  std::vector<std::unique_ptr<TestServer>> servers;
  for (int i = 0; i < kOrigins; ++i) {
    servers.push_back(
        std::make_unique<TestServer>(TestServer::Options{.hold_without_reading = true}));
  }
  TransportOptions options = OpenOptions();
  options.max_tls_session_origins = 2;
  MakeTransport(options);
  int done = 0;
  for (auto& server : servers) {
    HttpRequest r = Get("https://127.0.0.1:" + std::to_string(server->port()) + "/ok");
    r.deadlines.connect = milliseconds(0);
    r.deadlines.first_byte = milliseconds(0);
    r.deadlines.total = milliseconds(60'000);
    transport_->Send(r, [&](HttpResponse) { ++done; });
  }
  RunUntil(
      [&] {
        return std::all_of(servers.begin(), servers.end(),
                           [](const auto& s) { return s->accepted() == 1; });
      },
      "a connection to every origin");
  EXPECT_EQ(done, 0) << "every handshake should still be pending";
  EXPECT_EQ(transport_->ActiveOrigins(), size_t(kOrigins));
  // Each origin's cache is set on its handle: none may have been dropped (the newest one, the
  // only one without a multi handle yet, once was, and was then used after being freed).
  EXPECT_EQ(transport_->TlsSessionOrigins(), size_t(kOrigins));
  // One scan per new origin would be 62; an eighth more between scans makes 27.
  EXPECT_GE(transport_->TlsSessionScans(), 1u);
  EXPECT_LE(transport_->TlsSessionScans(), size_t(kOrigins / 2));
  transport_->Shutdown();  // cancels the held attempts
  EXPECT_EQ(done, kOrigins);
}

TEST_F(TlsTest, WrongCaIsTlsError) {
  TestServer server(TlsOptions());
  testing::TempFile ca(other_->ca_pem);
  MakeTransport(OpenOptionsWithCa(ca.path()));
  Outcome o = Fetch(Get(server.Url("/ok")));
  EXPECT_ERROR(o, TransportError::kTls);
  EXPECT_EQ(server.requests(), 0);
}

TEST_F(TlsTest, SystemTrustStoreRejectsTheTestCa) {
  TestServer server(TlsOptions());
  MakeOpenTransport();  // no test CA: verification against the system bundle
  Outcome o = Fetch(Get(server.Url("/ok")));
  EXPECT_ERROR(o, TransportError::kTls);
}

TEST_F(TlsTest, HandshakeThatNeverCompletesHitsConnectDeadline) {
  TestServer::Options options = TlsOptions();
  options.hold_without_reading = true;
  TestServer server(options);
  testing::TempFile ca(certs_->ca_pem);
  MakeTransport(OpenOptionsWithCa(ca.path()));
  HttpRequest r = Get(server.Url("/ok"));
  r.deadlines.connect = milliseconds(300);
  Outcome o = Fetch(r);
  EXPECT_ERROR(o, TransportError::kConnectTimeout);
  EXPECT_GE(o.elapsed, milliseconds(300));
  EXPECT_LT(o.elapsed, milliseconds(300) + kSlack);
}

TEST_F(CurlTransportTest, HealthyHostIsNotDelayedByPendingRequestsToAStuckHost) {
  TestServer stuck({});
  TestServer healthy({});
  TransportOptions options = OpenOptions();
  options.max_connections_per_host = 0;
  MakeTransport(options);
  constexpr int kStuck = 200;
  int stuck_done = 0;
  for (int i = 0; i < kStuck; ++i) {
    HttpRequest r = Get(stuck.Url("/never"));
    r.deadlines.first_byte = milliseconds(0);
    r.deadlines.total = milliseconds(60'000);
    transport_->Send(r, [&](HttpResponse resp) {
      ++stuck_done;
      EXPECT_ERROR(Outcome{resp}, TransportError::kCancelled);
    });
  }
  ASSERT_TRUE(RunUntil([&] { return stuck.requests() == kStuck; },
                       "all stuck requests to reach the stuck server"));
  // 50 healthy requests, 10 at a time, each bound by a 1 s first-byte deadline.
  constexpr int kHealthy = 50;
  int started = 0, ok = 0, failed = 0;
  std::function<void()> start_one = [&] {
    HttpRequest r = Get(healthy.Url("/ok"));
    r.deadlines.first_byte = milliseconds(1000);
    ++started;
    transport_->Send(r, [&](HttpResponse resp) {
      if (resp.ok() && resp.status == 200) {
        ++ok;
      } else {
        ++failed;
        ADD_FAILURE() << "healthy request failed: " << TransportErrorName(resp.error) << " "
                      << resp.error_message;
      }
      if (started < kHealthy) start_one();
    });
  };
  for (int i = 0; i < 10; ++i) start_one();
  ASSERT_TRUE(RunUntil([&] { return ok + failed == kHealthy; }, "healthy requests"));
  EXPECT_EQ(ok, kHealthy);
  EXPECT_EQ(stuck_done, 0) << "stuck requests must still be pending";
  EXPECT_EQ(transport_->InFlight(), size_t(kStuck));
  transport_->Shutdown();
  EXPECT_EQ(stuck_done, kStuck);
  EXPECT_EQ(transport_->InFlight(), 0u);
}

TEST_F(CurlTransportTest, ShutdownCancelsEverythingAndLaterSendsAreCancelled) {
  TestServer server({});
  MakeOpenTransport();
  std::vector<TransportError> errors;
  for (int i = 0; i < 5; ++i) {
    transport_->Send(Get(server.Url("/never")), [&](HttpResponse r) { errors.push_back(r.error); });
  }
  RunUntil([&] { return server.requests() == 5; }, "requests to reach the server");
  transport_->Shutdown();
  ASSERT_EQ(errors.size(), 5u);
  for (TransportError e : errors) EXPECT_EQ(e, TransportError::kCancelled);
  std::optional<HttpResponse> late;
  transport_->Send(Get(server.Url("/ok")), [&](HttpResponse r) { late = std::move(r); });
  EXPECT_FALSE(late.has_value()) << "callbacks never run inside Send()";
  RunUntil([&] { return late.has_value(); }, "the late send to be cancelled");
  EXPECT_EQ(late->error, TransportError::kCancelled);
}

TEST_F(CurlTransportTest, DestructionCancelsInFlightExchanges) {
  TestServer server({});
  MakeOpenTransport();
  int cancelled = 0;
  for (int i = 0; i < 3; ++i) {
    transport_->Send(Get(server.Url("/never")), [&](HttpResponse r) {
      if (r.error == TransportError::kCancelled) ++cancelled;
    });
  }
  RunUntil([&] { return server.requests() == 3; }, "requests to reach the server");
  transport_.reset();
  EXPECT_EQ(cancelled, 3);
  io_.restart();
  io_.poll();  // stale handlers of the destroyed transport must be harmless
}

TEST_F(CurlTransportTest, SendFromAnotherThreadCompletesOnTheLoop) {
  TestServer server({});
  MakeOpenTransport();
  std::optional<HttpResponse> got;
  std::thread::id callback_thread;
  std::thread sender([&] {
    transport_->Send(Get(server.Url("/ok")), [&](HttpResponse r) {
      callback_thread = std::this_thread::get_id();
      got = std::move(r);
    });
  });
  sender.join();
  RunUntil([&] { return got.has_value(); }, "cross-thread send");
  EXPECT_EQ(got->status, 200);
  EXPECT_EQ(callback_thread, std::this_thread::get_id());
}

// ---- SSRF through the transport ---------------------------------------------------------------

TEST_F(CurlTransportTest, LiteralPrivateTargetsAreRefusedWithoutTheSetting) {
  TestServer tls_like({});  // reachable, so a refusal cannot be mistaken for a connect error
  MakeTransport(TransportOptions{});
  std::string port = std::to_string(tls_like.port());
  for (const std::string& url : std::vector<std::string>{
           "https://127.0.0.1:" + port + "/", "https://[::1]:" + port + "/",
           "https://[::ffff:127.0.0.1]:" + port + "/", "https://10.0.0.1/",
           "https://169.254.169.254/latest/meta-data/", "https://0.0.0.0:" + port,
           "https://[fe80::1]/", "https://[64:ff9b::7f00:1]/"}) {
    Outcome o = Fetch(Get(url));
    EXPECT_ERROR(o, TransportError::kSsrfRefused) << url;
    EXPECT_NE(o.response.error_message.find("is in"), std::string::npos)
        << url << ": " << o.response.error_message;
  }
  EXPECT_EQ(tls_like.accepted(), 0);
}

TEST_F(CurlTransportTest, ObfuscatedLoopbackFormsAreRefused) {
  TestServer server({});
  MakeTransport(TransportOptions{});
  std::string port = std::to_string(server.port());
  for (const std::string& host :
       std::vector<std::string>{"127.1", "2130706433", "0x7f000001", "0177.0.0.1", "localhost",
                                "LOCALHOST", "localhost."}) {
    Outcome o = Fetch(Get("https://" + host + ":" + port + "/"));
    EXPECT_ERROR(o, TransportError::kSsrfRefused) << host;
  }
  EXPECT_EQ(server.accepted(), 0);
}

TEST_F(CurlTransportTest, PlainHttpIsRefusedWithoutTheSetting) {
  TestServer server({});
  MakeTransport(TransportOptions{});
  Outcome o = Fetch(Get(server.Url("/ok")));
  EXPECT_ERROR(o, TransportError::kSsrfRefused);
  EXPECT_NE(o.response.error_message.find("http"), std::string::npos);
  o = Fetch(Get("ftp://example.com/"));
  EXPECT_ERROR(o, TransportError::kSsrfRefused);
  EXPECT_EQ(server.accepted(), 0);
}

TEST_F(CurlTransportTest, LocalhostIsAllowedWithTheSetting) {
  TestServer server({});
  MakeOpenTransport();
  Outcome o = Fetch(Get("http://localhost:" + std::to_string(server.port()) + "/ok"));
  EXPECT_ERROR(o, TransportError::kNone);
  EXPECT_EQ(o.response.status, 200);
}

TEST_F(TlsTest, RedirectToARefusedAddressIsRefused) {
  // The first hop is allowed by an exception for 127.0.0.1 only; the redirect points at
  // 127.0.0.2, which the guard refuses before any connection is made.
  TestServer::Options options = TlsOptions();
  options.redirect_location = "https://127.0.0.2:1/ok";
  TestServer server(options);
  testing::TempFile ca(certs_->ca_pem);
  TransportOptions strict;
  strict.ssrf.allowed_ranges = {*CidrRange::Parse("127.0.0.1/32")};
  strict.ca_file = ca.path();
  MakeTransport(strict);
  HttpRequest r = Get(server.Url("/redirect"));
  Outcome o = Fetch(r);
  EXPECT_EQ(o.response.status, 302) << o.response.error_message;
  r.follow_redirects = true;
  o = Fetch(r);
  EXPECT_ERROR(o, TransportError::kSsrfRefused);
  EXPECT_NE(o.response.error_message.find("127.0.0.2"), std::string::npos)
      << o.response.error_message;
}

TEST_F(CurlTransportTest, BadUrlIsOther) {
  MakeOpenTransport();
  Outcome o = Fetch(Get("not a url"));
  EXPECT_ERROR(o, TransportError::kOther);
}

TEST_F(CurlTransportTest, UnknownNameIsDns) {
  MakeOpenTransport();
  Outcome o = Fetch(Get("http://no-such-host.invalid/"));
  EXPECT_ERROR(o, TransportError::kDns);
}

}  // namespace
}  // namespace bulkhead
