#include "bulkhead/replay/timeline_worker.h"

#include <curl/curl.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "bulkhead/client/faktory_client.h"
#include "bulkhead/replay/push_endpoint.h"
#include "bulkhead/util/rng.h"

namespace bulkhead {
namespace {

int64_t ThreadCpuMicros() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000 + ts.tv_nsec / 1000;
}

size_t Discard(char*, size_t size, size_t n, void*) { return size * n; }

std::vector<std::string> SplitCommaList(const std::string& list) {
  std::vector<std::string> items;
  for (size_t start = 0; start <= list.size();) {
    size_t comma = std::min(list.find(',', start), list.size());
    if (comma > start) items.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

// Runs one fetched job as the incident's application does: a push_notification is POSTed to its
// endpoint (blocking the thread), a timeline job burns its CPU and is reported as a "T" line on
// `out`; anything else fails (an "X" line). False when the connection to the server failed.
bool RunJob(FaktoryClient& client, const std::string& payload, std::FILE* out, std::mutex& out_mu) {
  int64_t start = SteadyMicros();
  auto doc = nlohmann::json::parse(payload, nullptr, false);
  std::string jid = doc.is_object() ? doc.value("jid", "") : "";
  std::string type = doc.is_object() ? doc.value("jobtype", "") : "";
  const auto& args = doc.is_object() ? doc["args"] : nlohmann::json();
  if (type == "push_notification" && args.is_array() && !args.empty() && args[0].is_object()) {
    Status sent = BlockingPost(args[0].value("endpoint", ""), args[0].value("payload", ""));
    return (sent.ok() ? client.Ack(jid) : client.Fail(jid, "PushError", sent.message())).ok();
  }
  if (type != "timeline" || !args.is_array() || args.size() < 2 || !args[0].is_number_integer() ||
      !args[1].is_number_integer()) {
    {
      std::lock_guard lock(out_mu);
      std::fprintf(out, "X %s\n", type.empty() ? "?" : type.c_str());
      std::fflush(out);
    }
    (void)client.Fail(jid, "ReplayError", "not a timeline job: " + type);
    return true;
  }
  BurnCpu(args[1].get<int64_t>());
  Status s = client.Ack(jid);
  int64_t end = SteadyMicros();
  if (!s.ok()) return false;
  std::lock_guard lock(out_mu);
  std::fprintf(out, "T %" PRId64 " %" PRId64 " %" PRId64 "\n", args[0].get<int64_t>(), start, end);
  std::fflush(out);
  return true;
}

}  // namespace

Status BlockingPost(const std::string& url, const std::string& body) {
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return Status::Internal("curl_easy_init failed");
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/octet-stream");
  headers = curl_slist_append(headers, "TTL: 172800");
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, Discard);
  // Mastodon's Request: connect 5 s; read 10 s per operation (no byte for 10 s); 30 s deadline
  // for the whole response.
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, 10L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 35000L);
  CURLcode rc = curl_easy_perform(curl);
  long code = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  if (rc != CURLE_OK) return Status::Unavailable(std::string("push: ") + curl_easy_strerror(rc));
  if (code < 200 || code > 299) return Status::Unavailable("push: HTTP " + std::to_string(code));
  return Status::Ok();
}

void BurnCpu(int64_t micros) {
  int64_t until = ThreadCpuMicros() + micros;
  volatile uint64_t x = 88172645463325252ull;
  while (ThreadCpuMicros() < until) {
    for (int i = 0; i < 1000; ++i) {  // xorshift: work the optimiser cannot drop
      uint64_t v = x;
      v ^= v << 13;
      v ^= v >> 7;
      v ^= v << 17;
      x = v;
    }
  }
}

int RunTimelineWorker(const TimelineWorkerOptions& options, std::FILE* out) {
  curl_global_init(CURL_GLOBAL_DEFAULT);  // before any thread starts
  std::string wid = RandomHex(8);
  FaktoryConnectOptions co;
  co.host = options.host;
  co.port = options.port;
  co.password = options.password;
  co.wid = wid;
  co.tls = options.tls;
  co.ca_file = options.ca_file;
  co.labels = {"replay", "timeline"};

  std::mutex out_mu;
  std::atomic<bool> stop{false};
  std::atomic<int> connected{0};

  const std::vector<std::string> queues = SplitCommaList(options.queue);

  auto worker = [&] {
    auto client = FaktoryClient::Connect(co);
    if (!client.ok()) {
      std::fprintf(stderr, "replay-worker: %s\n", client.status().message().c_str());
      stop = true;
      return;
    }
    connected.fetch_add(1);
    while (!stop) {
      auto job = (*client)->Fetch(queues);
      if (!job.ok()) break;  // the server went away
      if (!job->has_value()) continue;
      if (!RunJob(**client, **job, out, out_mu)) break;
    }
    stop = true;
  };

  std::vector<std::thread> threads;
  for (int i = 0; i < options.concurrency; ++i) threads.emplace_back(worker);

  // Heartbeat on its own connection, as Faktory workers do: every 5 s, until told to terminate.
  auto beat_client = FaktoryClient::Connect(co);
  while (!stop && beat_client.ok()) {
    auto state = (*beat_client)->Beat();
    if (!state.ok() || *state == "terminate") break;
    for (int i = 0; i < 50 && !stop; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  stop = true;
  for (auto& t : threads) t.join();
  return connected.load() > 0 ? 0 : 1;
}

}  // namespace bulkhead
