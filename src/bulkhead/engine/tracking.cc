#include "bulkhead/engine/tracking.h"

#include <nlohmann/json.hpp>

#include "bulkhead/util/json.h"
#include "bulkhead/util/time_format.h"

namespace bulkhead {
namespace {

using nlohmann::json;

constexpr auto kMaxReservation = std::chrono::hours(24);

Status Bad(const std::string& what) { return Status::InvalidArgument("TRACK SET: " + what); }

}  // namespace

Tracking::Tracking(Store& store, Clock& clock) : store_(store), clock_(clock) {}

bool Tracking::IsTracked(const std::string& payload) {
  if (!TextContains(payload, "\"track\"")) return false;  // most jobs: no parse
  auto doc = json::parse(payload, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return false;
  auto custom = doc.find("custom");
  if (custom == doc.end() || !custom->is_object()) return false;
  auto track = custom->find("track");
  if (track == custom->end()) return false;
  return (track->is_number_integer() && track->get<int64_t>() == 1) ||
         (track->is_boolean() && track->get<bool>());
}

void Tracking::Set(std::string_view json_text, int max_json_depth, Done done) {
  auto parsed = ParseJson(json_text, max_json_depth);
  if (!parsed.ok()) return done(parsed.status());
  const json& doc = *parsed;
  if (!doc.is_object()) return done(Status::InvalidArgument("TRACK SET needs a JSON object"));
  auto jid = doc.find("jid");
  if (jid == doc.end() || !jid->is_string() || jid->get_ref<const std::string&>().empty()) {
    return done(Status::InvalidArgument("TRACK SET needs a jid"));
  }
  TrackUpdate update{.jid = jid->get<std::string>()};
  if (auto p = doc.find("percent"); p != doc.end() && !p->is_null()) {
    if (!p->is_number_integer() || p->get<int64_t>() < 0 || p->get<int64_t>() > 100) {
      return done(Bad("percent must be an integer from 0 to 100"));
    }
    update.percent = p->get<int>();
  }
  if (auto d = doc.find("desc"); d != doc.end() && !d->is_null()) {
    if (!d->is_string()) return done(Bad("desc must be a string"));
    update.desc = d->get<std::string>();
  }
  TimePoint now = clock_.Now();
  std::optional<TimePoint> reserve_until;
  if (auto r = doc.find("reserve_until"); r != doc.end() && !r->is_null()) {
    if (!r->is_string()) return done(Bad("reserve_until must be an RFC 3339 time"));
    auto until = ParseRfc3339(r->get<std::string>());
    if (!until.ok()) return done(Bad("invalid reserve_until: " + until.status().message()));
    if (*until > now + kMaxReservation) {
      return done(
          Bad("reserve_until is more than a day ahead (jobs cannot be reserved for more "
              "than one day)"));
    }
    reserve_until = *until;
  }
  std::string jid_text = update.jid;
  store_.tracks().Set(
      std::move(update), now,
      alive_.Guard([this, jid_text, reserve_until, done = std::move(done)](Status s) {
        if (!s.ok() || !reserve_until) return done(s);
        ExtendTo(jid_text, *reserve_until, done);
      }));
}

void Tracking::ExtendTo(const std::string& jid, TimePoint until, Done done) {
  store_.GetWorking(jid, alive_.Guard([this, jid, until,
                                       done = std::move(done)](Result<std::optional<JobRecord>> r) {
    if (!r.ok()) return done(r.status());
    // Not reserved (queued, done, unknown), or already reserved longer: nothing to extend.
    if (!r->has_value() || ToUnixMicros(until) <= (*r)->score) return done(Status::Ok());
    store_.ExtendReservation(jid, until, alive_.Guard([done](Status s) {
      // Acked or failed meanwhile: nothing left to extend.
      done(s.code() == StatusCode::kNotFound ? Status::Ok() : s);
    }));
  }));
}

void Tracking::Get(const std::string& jid, TextCallback cb) {
  store_.tracks().Get(jid, clock_.Now(),
                      alive_.Guard([jid, cb = std::move(cb)](Result<std::optional<TrackRecord>> r) {
                        if (!r.ok()) return cb(r.status());
                        json out = json::object();
                        out["jid"] = jid;
                        if (!r->has_value()) {
                          out["state"] = "unknown";
                          out["updated_at"] = "";
                          return cb(DumpJson(out));
                        }
                        const TrackRecord& t = **r;
                        if (t.percent) out["percent"] = *t.percent;
                        if (t.desc) out["desc"] = *t.desc;
                        out["state"] = t.state.empty() ? "unknown" : t.state;
                        out["updated_at"] = FormatRfc3339(FromUnixMicros(t.updated_us));
                        cb(DumpJson(out));
                      }));
}

}  // namespace bulkhead
