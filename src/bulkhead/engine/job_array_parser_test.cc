#include "bulkhead/engine/job_array_parser.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bulkhead/util/json.h"
#include "bulkhead/util/json_text.h"
#include "bulkhead/util/simd_json.h"

namespace bulkhead {
namespace {

const TimePoint kPushbNow = FromUnixMicros(1'700'000'000'000'000);

int PushbRetryFor(const std::string& jobtype) { return jobtype == "mail" ? 3 : 25; }

std::string DescribeJob(const Result<JobRecord>& r) {
  if (!r.ok()) return "error: " + r.status().message();
  return r->jid + " | " + r->queue + " | " + r->jobtype + " | " +
         std::to_string(static_cast<int>(r->state)) + " | " + std::to_string(r->score) + " | " +
         std::to_string(r->enqueued_us) + " | " + std::to_string(r->reserve_for_s) + " | " +
         r->payload;
}

// Every element of `array_text` as the document path checks it: the array parsed whole, each
// element through ParseJobDocument with its own text.
std::vector<std::string> CheckedByDocument(const std::string& array_text) {
  auto doc = ParseJson(array_text, kDefaultMaxJsonDepth);
  EXPECT_TRUE(doc.ok()) << doc.status().ToString();
  std::vector<std::string_view> texts = JsonArrayElements(array_text);
  std::vector<std::string> out;
  for (size_t i = 0; i < doc->size(); ++i) {
    out.push_back(
        DescribeJob(ParseJobDocument(std::move((*doc)[i]), kPushbNow, PushbRetryFor, texts[i])));
  }
  return out;
}

// Jobs of every shape the checks tell apart (the element texts of one PUSHB).
std::vector<std::string> JobsOfEveryShape() {
  return {
      R"({"jid":"0123456789abcdef","jobtype":"noop","args":[1,"two",{"three":3}]})",
      R"({ "jid" : "0123456789abcdef" , "jobtype" : "mail" , "args" : [ ] , "queue" : "q.1" })",
      R"({"jid":"0123456789abcdef","jobtype":"a","args":[],"queue":null,"retry":null})",
      R"({"jid":"0123456789abcdef","jobtype":"a","args":[],"queue":"","at":""})",
      R"({"jid":"0123456789abcdef","jobtype":"a","args":[],"at":null,"enqueued_at":"x"})",
      R"({"jid":"0123456789abcdef","jobtype":"a","args":[],"at":"2099-01-01T00:00:00Z"})",
      R"({"jid":"0123456789abcdef","jobtype":"a","args":[],"at":"2001-01-01T00:00:00Z"})",
      R"({"jid":"0123456789abcdef","jobtype":"a","args":[],"at":"2099-01-01T00:00:00Z","enqueued_at":1})",
      R"({"jid":"0123456789abcdef","jobtype":"a","args":[],"at":"soon"})",
      R"({"jid":"0123456789abcdef","jobtype":"a","args":[],"at":5})",
      R"({"jid":"0123456789abcdef","jobtype":"a","args":[],"reserve_for":30})",
      R"({"jid":"0123456789abcdef","jobtype":"a","args":[],"reserve_for":0})",
      R"({"jid":"0123456789abcdef","jobtype":"a","args":[],"reserve_for":-5})",
      R"({"jid":"0123456789abcdef","jobtype":"a","args":[],"reserve_for":600.9})",
      R"({"jid":"0123456789abcdef","jobtype":"a","args":[],"reserve_for":1e300})",
      R"({"jid":"0123456789abcdef","jobtype":"a","args":[],"reserve_for":18446744073709551615})",
      R"({"jid":"0123456789abcdef","jobtype":"a","args":[],"reserve_for":86401})",
      R"({"jid":"0123456789abcdef","jobtype":"a","args":[],"reserve_for":"60"})",
      R"({"jid":"0123456789abcdef","jobtype":"a","args":[],"retry":2.5})",
      R"({"jid":"0123456789abcdef","jobtype":"a","args":[],"retry":-1})",
      R"({"jid":"0123456789abcdef","jobtype":"a","args":[],"retry":true})",
      R"({"jid":"0123456789abcdef","jobtype":"a","args":[],"created_at":"2020-01-01T00:00:00Z"})",
      R"({"jid":"0123456789abcdef","jobtype":"a","args":[],"created_at":7})",
      R"({"jid":"0123456789abcdef","jobtype":"a","args":{}})",
      R"({"jid":"0123456789abcdef","jobtype":"a","args":null})",
      R"({"jid":"0123456789abcdef","jobtype":"a"})",
      R"({"jid":"0123456789abcdef","jobtype":"","args":[]})",
      R"({"jid":"0123456789abcdef","jobtype":["a"],"args":[]})",
      R"({"jid":"short","jobtype":"a","args":[]})",
      R"({"jid":12345678901,"jobtype":"a","args":[]})",
      R"({"jobtype":"a","args":[]})",
      R"({"jid":"0123456789abcdef","jobtype":"a","args":[],"queue":"a b"})",
      R"({"jid":"0123456789abcdef","jobtype":"a","args":[],"queue":{"name":"q"}})",
      // A key given twice: the last value counts, and the job is written out again.
      R"({"jid":"0123456789abcdef","jobtype":"a","args":[],"queue":"first","queue":"last"})",
      R"({"jid":"0123456789abcdef","jobtype":"a","args":[],"x":1,"x":{"y":2}})",
      R"({"jid":"short","jid":"0123456789abcdef","jobtype":"a","args":[]})",
      // Escapes: \u is written out again, other escapes kept.
      R"({"jid":"0123456789abcdef","jobtype":"a","args":["\u00e9"],"custom":{"\u0062id":"b"}})",
      R"({"jid":"0123456789abcdef","jobtype":"a\"b","args":["\\u","tab\t"]})",
      // Members nested deeper are not the job's: a "queue" inside custom is not its queue.
      R"({"jid":"0123456789abcdef","jobtype":"a","args":[{"queue":"x","jid":1}],"custom":{"at":"soon"}})",
      R"({})",
      "1",
      "\"a string\"",
      "null",
      "[1,2]",
  };
}

// The jobs of one PUSHB of `jobs` as the document path gives each; `fast`: simdjson reads it.
void CheckEachJob(const std::vector<std::string>& jobs, bool fast) {
  std::string array = "[";
  for (size_t i = 0; i < jobs.size(); ++i) array += (i ? "," : "") + jobs[i];
  array += "]";
  simdjson::dom::element root;
  ASSERT_EQ(SimdJsonParse(array, kDefaultMaxJsonDepth, root), fast);
  auto parsed = ParseJobArray(array, kPushbNow, kDefaultMaxJsonDepth, PushbRetryFor);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_TRUE(parsed->is_array);
  std::vector<std::string> expected = CheckedByDocument(array);
  ASSERT_EQ(parsed->jobs.size(), jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    EXPECT_EQ(DescribeJob(parsed->jobs[i].job), expected[i]) << jobs[i];
  }
  // The error map's keys: the element's jid when it is a string.
  EXPECT_EQ(parsed->jobs[0].jid, "0123456789abcdef");
  EXPECT_EQ(parsed->jobs[28].jid, "short");
  EXPECT_EQ(parsed->jobs[29].jid, "");
  EXPECT_EQ(parsed->jobs[35].jid, "0123456789abcdef");
  EXPECT_EQ(parsed->jobs[jobs.size() - 1].jid, fast ? "" : "0123456789abcdef");
}

// Each gives what ParseJobDocument gives it, whether simdjson reads the array (the fast path,
// simd_json.h) or nlohmann does (the array holds an integer beyond 64 bits, which simdjson
// refuses).
TEST(JobArrayParserTest, EachJobAsTheDocumentPathGivesIt) {
  for (bool fast : {true, false}) {
    std::vector<std::string> jobs = JobsOfEveryShape();
    if (!fast)
      jobs.push_back(
          R"({"jid":"0123456789abcdef","jobtype":"a","args":[1e2,18446744073709551616]})");
    CheckEachJob(jobs, fast);
  }
}

TEST(JobArrayParserTest, AJobThatOnlyGainsMembersKeepsItsOwnText) {
  auto parsed = ParseJobArray(R"([ {"jid":"0123456789abcdef","jobtype":"a","args":[1.50]} ])",
                              kPushbNow, kDefaultMaxJsonDepth, PushbRetryFor);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_EQ(parsed->jobs.size(), 1u);
  ASSERT_TRUE(parsed->jobs[0].job.ok());
  EXPECT_EQ(parsed->jobs[0].job->payload,
            R"({"jid":"0123456789abcdef","jobtype":"a","args":[1.50],"queue":"default",)"
            R"("retry":25,"created_at":"2023-11-14T22:13:20Z",)"
            R"("enqueued_at":"2023-11-14T22:13:20Z"})");
}

TEST(JobArrayParserTest, TextErrorsAreParseJsonsAndOtherDocumentsAreNotArrays) {
  for (std::string text : {"[{\"jid\":", "[1,]", "{\"a\":1} x", "[\"\xff\"]", "[1e400]", ""}) {
    auto parsed = ParseJobArray(text, kPushbNow, kDefaultMaxJsonDepth);
    auto doc = ParseJson(text, kDefaultMaxJsonDepth);
    ASSERT_FALSE(doc.ok()) << text;
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.status().message(), doc.status().message()) << text;
  }
  // The depth bound counts the array: three levels are [ { "args": [ ...
  std::string deep = R"([{"jid":"0123456789abcdef","jobtype":"a","args":[[]]}])";
  auto parsed = ParseJobArray(deep, kPushbNow, 3);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(), ParseJson(deep, 3).status().message());
  EXPECT_TRUE(ParseJobArray(deep, kPushbNow, 4).ok());
  for (std::string text : {"{\"jid\":\"0123456789abcdef\"}", "1", "null", "\"[]\""}) {
    auto other = ParseJobArray(text, kPushbNow, kDefaultMaxJsonDepth);
    ASSERT_TRUE(other.ok()) << text;
    EXPECT_FALSE(other->is_array) << text;
  }
  auto empty = ParseJobArray(" [ ] ", kPushbNow, kDefaultMaxJsonDepth);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->is_array);
  EXPECT_TRUE(empty->jobs.empty());
}

// An array of more than max_jobs elements is refused with the bound's error, on both paths (an
// integer beyond 64 bits sends the text to nlohmann's), whatever follows the last one allowed.
TEST(JobArrayParserTest, MoreJobsThanTheBoundAreRefusedNamingIt) {
  const std::string job = R"({"jid":"0123456789abcdef","jobtype":"a","args":[]})";
  const std::string big =
      R"({"jid":"0123456789abcdef","jobtype":"a","args":[18446744073709551616]})";
  for (const std::string& last : {job, big}) {
    std::string three = "[" + job + ",1," + last + "]";
    auto at_bound = ParseJobArray(three, kPushbNow, kDefaultMaxJsonDepth, PushbRetryFor, 3);
    ASSERT_TRUE(at_bound.ok()) << at_bound.status().ToString();
    EXPECT_EQ(at_bound->jobs.size(), 3u);
    std::string four = "[" + job + ",1,[]," + last + "]";
    auto over = ParseJobArray(four, kPushbNow, kDefaultMaxJsonDepth, PushbRetryFor, 3);
    ASSERT_FALSE(over.ok());
    EXPECT_EQ(over.status().message(), "PUSHB holds more than 3 jobs (max_pushb_jobs)");
  }
  // Found before the rest is read: invalid JSON after the bound's last element is not reached.
  auto cut = ParseJobArray("[1,2,3,{\"jid\":", kPushbNow, kDefaultMaxJsonDepth, PushbRetryFor, 3);
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.status().message(), "PUSHB holds more than 3 jobs (max_pushb_jobs)");
}

}  // namespace
}  // namespace bulkhead
