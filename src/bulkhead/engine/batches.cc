#include "bulkhead/engine/batches.h"

#include <nlohmann/json.hpp>

#include "bulkhead/util/json.h"
#include "bulkhead/util/time_format.h"

namespace bulkhead {
namespace {

using nlohmann::json;

constexpr char kBase64Url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

Status NoSuchBatch(const std::string& bid) { return Status::NotFound("No such batch " + bid); }

// The callback `which` ("success" or "complete") of a BATCH NEW document, parsed as a job and
// tagged custom._bid / custom._cb; a JobRecord with an empty jid when the document has none.
Result<JobRecord> ParseCallback(json& doc, const char* which, const std::string& bid, TimePoint now,
                                const RetryDefault& retry_for) {
  auto it = doc.find(which);
  if (it == doc.end() || it->is_null()) return JobRecord{};
  if (!it->is_object()) {
    return Status::InvalidArgument(std::string("BATCH NEW: the ") + which +
                                   " callback must be a job (a JSON object)");
  }
  json job = std::move(*it);
  if (!job.contains("custom") || !job["custom"].is_object()) job["custom"] = json::object();
  job["custom"]["_bid"] = bid;
  job["custom"]["_cb"] = which;
  auto parsed = ParseJobDocument(std::move(job), now, retry_for);
  if (!parsed.ok()) {
    return Status::InvalidArgument(std::string("BATCH NEW: invalid ") + which +
                                   " callback: " + parsed.status().message());
  }
  return parsed;
}

}  // namespace

Batches::Batches(Store& store, Clock& clock, Rng& rng, RetryDefault retry_for)
    : store_(store), clock_(clock), rng_(rng), retry_for_(std::move(retry_for)) {}

Batches::~Batches() = default;

std::string Batches::MakeBid() {
  std::string bid = "b-";
  for (int i = 0; i < 14; ++i) bid += kBase64Url[rng_.Uniform(64)];
  return bid;
}

std::string Batches::BatchIdOf(const std::string& payload) {
  if (!TextContains(payload, "\"bid\"")) return {};  // most jobs: no parse
  auto doc = json::parse(payload, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return {};
  auto custom = doc.find("custom");
  if (custom == doc.end() || !custom->is_object()) return {};
  auto bid = custom->find("bid");
  return bid != custom->end() && bid->is_string() ? bid->get<std::string>() : std::string();
}

void Batches::New(std::string_view json_text, int max_json_depth, TextCallback cb) {
  auto parsed = ParseJson(json_text, max_json_depth);
  if (!parsed.ok()) return cb(parsed.status());
  json doc = std::move(*parsed);
  if (!doc.is_object()) return cb(Status::InvalidArgument("BATCH NEW needs a JSON object"));
  if (auto given = doc.find("bid"); given != doc.end() && !given->is_null()) {
    if (!given->is_string() || !given->get_ref<const std::string&>().empty()) {
      return cb(Status::InvalidArgument("BATCH NEW: bid must be empty (the server assigns it)"));
    }
  }
  BatchRecord batch;
  for (auto [field, out] :
       {std::pair{"parent_bid", &batch.parent_bid}, std::pair{"description", &batch.description}}) {
    auto it = doc.find(field);
    if (it == doc.end() || it->is_null()) continue;
    if (!it->is_string()) {
      return cb(Status::InvalidArgument(std::string("BATCH NEW: ") + field + " must be a string"));
    }
    *out = it->get<std::string>();
  }
  TimePoint now = clock_.Now();
  batch.bid = MakeBid();
  batch.created_us = ToUnixMicros(now);
  auto complete = ParseCallback(doc, "complete", batch.bid, now, retry_for_);
  if (!complete.ok()) return cb(complete.status());
  auto success = ParseCallback(doc, "success", batch.bid, now, retry_for_);
  if (!success.ok()) return cb(success.status());
  if (complete->jid.empty() && success->jid.empty()) {
    return cb(Status::InvalidArgument(
        "BATCH NEW needs a success or complete callback job (neither was given)"));
  }
  batch.complete = std::move(*complete);
  batch.success = std::move(*success);
  std::string bid = batch.bid;
  store_.batches().New(std::move(batch), now, alive_.Guard([bid, cb = std::move(cb)](Status s) {
    if (!s.ok()) return cb(s);
    cb(bid);
  }));
}

void Batches::Open(const std::string& bid, TextCallback cb) {
  store_.batches().Get(
      bid, clock_.Now(),
      alive_.Guard([bid, cb = std::move(cb)](Result<std::optional<BatchRecord>> r) {
        if (!r.ok()) return cb(r.status());
        if (!r->has_value()) return cb(NoSuchBatch(bid));
        cb(bid);
      }));
}

void Batches::Commit(const std::string& bid, Done done) {
  store_.batches().Commit(bid, clock_.Now(), alive_.Guard(std::move(done)));
}

void Batches::GetStatus(const std::string& bid, TextCallback cb) {
  store_.batches().Get(
      bid, clock_.Now(),
      alive_.Guard([bid, cb = std::move(cb)](Result<std::optional<BatchRecord>> r) {
        if (!r.ok()) return cb(r.status());
        if (!r->has_value()) return cb(NoSuchBatch(bid));
        const BatchRecord& b = **r;
        // Faktory's fields; parent_bid is absent for a top-level batch (Go:
        // omitempty).
        json out = json::object();
        out["bid"] = b.bid;
        if (!b.parent_bid.empty()) out["parent_bid"] = b.parent_bid;
        out["description"] = b.description;
        out["created_at"] = FormatRfc3339(FromUnixMicros(b.created_us));
        out["total"] = b.total;
        out["pending"] = b.pending;
        out["failed"] = b.failed;
        out["complete_st"] = b.complete_st;
        out["success_st"] = b.success_st;
        cb(DumpJson(out));
      }));
}

}  // namespace bulkhead
