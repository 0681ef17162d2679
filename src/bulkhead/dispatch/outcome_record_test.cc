#include "bulkhead/dispatch/outcome_record.h"

#include <gtest/gtest.h>

#include "bulkhead/util/time_format.h"

namespace bulkhead {
namespace {

using nlohmann::json;

const TimePoint kAt = *ParseRfc3339("2026-03-04T05:06:07.123456Z");

OutcomeRecord DeadRecord() {
  OutcomeRecord r;
  r.event = kEventDeliveryDead;
  r.at = kAt;
  r.host = "inbox.example:8443";
  r.status = 403;
  r.reason = "http 403";
  r.jid = "0123456789ab";
  r.jobtype = "activitypub";
  r.url = "https://inbox.example:8443/inbox";
  r.context = {{"account_id", 7}, {"tags", {"a", "b"}}, {"nested", {{"x", nullptr}}}};
  return r;
}

OutcomeRecord UnavailableRecord() {
  OutcomeRecord r;
  r.event = kEventHostUnavailable;
  r.at = kAt;
  r.host = "dead.example";
  r.reason = "timeout";
  r.since = kAt - std::chrono::hours(24 * 7);
  return r;
}

TEST(OutcomeRecordTest, ToJsonWritesTheDocumentedObject) {
  EXPECT_EQ(ToJson(DeadRecord()), json::parse(R"({
    "event": "delivery_dead", "at": "2026-03-04T05:06:07.123456Z", "host": "inbox.example:8443",
    "status": 403, "reason": "http 403", "jid": "0123456789ab", "jobtype": "activitypub",
    "url": "https://inbox.example:8443/inbox",
    "context": {"account_id": 7, "tags": ["a", "b"], "nested": {"x": null}}})"));
  EXPECT_EQ(ToJson(UnavailableRecord()), json::parse(R"({
    "event": "host_unavailable", "at": "2026-03-04T05:06:07.123456Z", "host": "dead.example",
    "status": null, "reason": "timeout", "since": "2026-02-25T05:06:07.123456Z"})"))
      << "host events: no jid, jobtype, url or context; status always present";
}

TEST(OutcomeRecordTest, RoundTripsEveryShape) {
  OutcomeRecord gone = DeadRecord();
  gone.event = kEventWebPushGone;
  gone.status = 410;
  gone.context = nullptr;
  OutcomeRecord available = UnavailableRecord();
  available.event = kEventHostAvailable;
  available.reason.clear();
  available.since.reset();
  OutcomeRecord relay =
      DeadRecord();  // a later kind of event (a push relay's token gone) reads too
  relay.event = "relay_token_gone";
  relay.status.reset();
  for (const OutcomeRecord& r : {DeadRecord(), gone, UnavailableRecord(), available, relay}) {
    json doc = ToJson(r);
    Result<OutcomeRecord> back = OutcomeRecordFromJson(doc);
    ASSERT_TRUE(back.ok()) << back.status().ToString() << " " << doc.dump();
    EXPECT_EQ(*back, r) << doc.dump();
    EXPECT_EQ(ToJson(*back).dump(), doc.dump()) << "deterministic text";
    // Through text, as a worker in another language receives it.
    Result<OutcomeRecord> parsed = OutcomeRecordFromJson(json::parse(doc.dump()));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, r);
  }
}

TEST(OutcomeRecordTest, FromJsonIgnoresFieldsItDoesNotKnow) {
  json doc = ToJson(DeadRecord());
  doc["added_later"] = {{"anything", true}};
  Result<OutcomeRecord> back = OutcomeRecordFromJson(doc);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, DeadRecord());
}

TEST(OutcomeRecordTest, FromJsonNamesWhatIsWrong) {
  auto with = [](const char* field, json value) {
    json doc = ToJson(DeadRecord());
    if (value.is_discarded()) {
      doc.erase(field);
    } else {
      doc[field] = value;
    }
    return OutcomeRecordFromJson(doc).status();
  };
  const json missing(json::value_t::discarded);
  const std::pair<Status, const char*> cases[] = {
      {with("event", missing), "outcome.event is missing"},
      {with("event", "Delivery-Dead"), "outcome.event must be lowercase"},
      {with("at", missing), "outcome.at is missing"},
      {with("at", "yesterday"), "outcome.at is not an RFC 3339 time"},
      {with("host", ""), "outcome.host must not be empty"},
      {with("status", 42), "outcome.status must be an HTTP status"},
      {with("status", "404"), "outcome.status must be an HTTP status"},
      {with("jid", 12), "outcome.jid must be a string"},
      {with("context", json::array({1})), "outcome.context must be a JSON object"},
      {with("since", "soon"), "outcome.since is not an RFC 3339 time"},
  };
  for (const auto& [status, want] : cases) {
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << want;
    EXPECT_EQ(status.message().rfind(want, 0), 0u) << status.message();
  }
  EXPECT_FALSE(OutcomeRecordFromJson(json::array({ToJson(DeadRecord())})).ok());
}

TEST(OutcomeRecordTest, PositionalArgumentsAreThoseOfEarlierVersions) {
  OutcomeRecord r = DeadRecord();
  EXPECT_EQ(PositionalOutcomeArgs(r), json::array({r.jid, r.jobtype, r.reason, r.url}));
  r.event = kEventWebPushGone;
  EXPECT_EQ(PositionalOutcomeArgs(r), json::array({r.url, r.jid}));
  EXPECT_EQ(PositionalOutcomeArgs(UnavailableRecord()), json::array({"dead.example"}));
  r.event = "relay_token_gone";
  EXPECT_EQ(PositionalOutcomeArgs(r), json::array({ToJson(r)})) << "new events have no old form";
  EXPECT_EQ(OutcomeJobType(kEventHostAvailable), "bulkhead.host_available");
}

}  // namespace
}  // namespace bulkhead
