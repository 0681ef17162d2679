// Web Push encoder throughput: encrypt (RFC 8291) + VAPID-sign (RFC 8292) per op, with the VAPID
// JWT cache on (the production path: one ES256 signature per push service per ~11 h) and off
// (one signature per message, what npm web-push's generateRequestDetails does).
// bench/run.d/20-webpush.sh runs this and compares it with npm web-push on the same machine.
#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>

#include "bulkhead/encoders/vapid.h"
#include "bulkhead/encoders/webpush_encryption.h"
#include "bulkhead/encoders/webpush_request.h"
#include "bulkhead/util/clock.h"

namespace bulkhead {
namespace {

// A subscription (RFC 8291 Appendix A user agent keys) and a Mastodon-sized payload (~420 bytes).
constexpr char kP256dh[] =
    "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4";
constexpr char kAuth[] = "BTBZMqHH6r4Tts7J_aSIgg";

std::string Payload() {
  return R"({"access_token":"Zb7n4xkPMpSMQHv3yW9pu2cY1WbjTzYkC5sJqGZAVi8","preferred_locale":"en",)"
         R"("notification_id":"113582937413904221","notification_type":"mention",)"
         R"("icon":"https://files.example/accounts/avatars/000/000/001/original/abc.png",)"
         R"("title":"Alice mentioned you","body":"@bob have you seen the new release? It )"
         R"(fixes the delivery backlog we talked about last week and adds per-host limits."})";
}

nlohmann::json Job(const char* encoding) {
  return {{"subscription",
           {{"endpoint", "https://fcm.googleapis.com/fcm/send/dGVzdC1zdWJzY3JpcHRpb24"},
            {"keys", {{"p256dh", kP256dh}, {"auth", kAuth}}}}},
          {"payload", Payload()},
          {"ttl", 172800},
          {"urgency", "normal"},
          {"content_encoding", encoding}};
}

std::unique_ptr<VapidSigner> MakeSigner(bool cache) {
  VapidSignerOptions options;
  options.cache = cache;
  return std::move(*VapidSigner::Create(*VapidKey::Generate(), "mailto:ops@example.com",
                                        SystemClock::Instance(), options));
}

// Encrypt + sign from a job argument already parsed at PUSH time.
void BM_WebPushBuildRequest(benchmark::State& state) {
  const bool cache = state.range(0) != 0;
  static std::unique_ptr<VapidSigner> signers[2] = {MakeSigner(false), MakeSigner(true)};
  VapidSigner& signer = *signers[cache ? 1 : 0];
  WebPushArgs args = *ParseWebPushArgs(Job("aes128gcm"));
  for (auto _ : state) {
    Result<WebPushRequest> req = BuildWebPushRequest(args, signer);
    if (!req.ok()) state.SkipWithError(req.status().ToString().c_str());
    benchmark::DoNotOptimize(req);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(cache ? "jwt_cache=on" : "jwt_cache=off");
}
BENCHMARK(BM_WebPushBuildRequest)->ArgName("jwt_cache")->Arg(1)->Arg(0);
BENCHMARK(BM_WebPushBuildRequest)->ArgName("jwt_cache")->Arg(1)->Arg(0)->Threads(2)->UseRealTime();

// Whole job: parse + validate the JSON argument (keys, URL), encrypt, sign.
void BM_WebPushFromJson(benchmark::State& state) {
  const bool cache = state.range(0) != 0;
  auto signer = MakeSigner(cache);
  nlohmann::json job = Job(state.range(1) != 0 ? "aesgcm" : "aes128gcm");
  for (auto _ : state) {
    Result<WebPushRequest> req = BuildWebPushRequest(job, *signer);
    if (!req.ok()) state.SkipWithError(req.status().ToString().c_str());
    benchmark::DoNotOptimize(req);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_WebPushFromJson)
    ->ArgNames({"jwt_cache", "aesgcm"})
    ->Args({1, 0})
    ->Args({0, 0})
    ->Args({1, 1});

// The parts on their own.
void BM_WebPushEncryptOnly(benchmark::State& state) {
  WebPushSubscriberKeys keys = *WebPushSubscriberKeys::Parse(kP256dh, kAuth);
  std::string payload = Payload();
  for (auto _ : state) {
    Result<EncryptedPush> push = EncryptWebPush(keys, payload);
    benchmark::DoNotOptimize(push);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_WebPushEncryptOnly);

void BM_VapidSignUncached(benchmark::State& state) {
  auto signer = MakeSigner(false);
  for (auto _ : state) {
    Result<std::string> token = signer->Token("https://fcm.googleapis.com");
    benchmark::DoNotOptimize(token);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_VapidSignUncached);

void BM_ValidateWebPushArgs(benchmark::State& state) {
  nlohmann::json job = Job("aes128gcm");
  for (auto _ : state) benchmark::DoNotOptimize(ValidateWebPushArgs(job));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ValidateWebPushArgs);

}  // namespace
}  // namespace bulkhead
