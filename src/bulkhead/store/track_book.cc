#include "bulkhead/store/track_book.h"

#include <nlohmann/json.hpp>

#include "bulkhead/store/batch_book.h"

namespace bulkhead {
namespace {

using nlohmann::json;

std::string Encode(const TrackRecord& r) {
  json j = {{"state", r.state}, {"updated_us", r.updated_us}};
  if (r.percent) j["percent"] = *r.percent;
  if (r.desc) j["desc"] = *r.desc;
  return j.dump();
}

}  // namespace

Status TrackBook::Load(const std::string& key, const std::string& value) {
  auto j = json::parse(value, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Status::InvalidArgument("tracking record " + key + " is not JSON");
  TrackRecord r;
  r.jid = key;
  r.state = j.value("state", "");
  r.updated_us = j.value("updated_us", int64_t{0});
  if (auto p = j.find("percent"); p != j.end() && p->is_number_integer()) r.percent = p->get<int>();
  if (auto d = j.find("desc"); d != j.end() && d->is_string()) r.desc = d->get<std::string>();
  expiry_.emplace(r.updated_us + kTrackTtlUs, key);
  records_[key] = std::move(r);
  return Status::Ok();
}

const TrackRecord* TrackBook::Find(const std::string& jid, int64_t now_us) const {
  auto it = records_.find(jid);
  if (it == records_.end() || it->second.updated_us + kTrackTtlUs <= now_us) return nullptr;
  return &it->second;
}

void TrackBook::Save(TrackRecord& r, int64_t now_us, std::vector<Change>& out) {
  if (r.updated_us != 0) expiry_.erase({r.updated_us + kTrackTtlUs, r.jid});
  r.updated_us = now_us;
  expiry_.emplace(now_us + kTrackTtlUs, r.jid);
  out.push_back(RecordChange(kTrackSpace, r.jid, Encode(r)));
}

void TrackBook::Set(const TrackUpdate& update, int64_t now_us, std::vector<Change>& out) {
  TrackRecord& r = records_[update.jid];
  if (r.jid.empty() || r.updated_us + kTrackTtlUs <= now_us) {  // new, or expired: start afresh
    expiry_.erase({r.updated_us + kTrackTtlUs, update.jid});
    r = TrackRecord{.jid = update.jid};
  }
  if (update.percent) r.percent = update.percent;
  if (update.desc) r.desc = update.desc;
  Save(r, now_us, out);
}

void TrackBook::SetState(const std::string& jid, const char* state, bool start, int64_t now_us,
                         std::vector<Change>& out) {
  auto it = records_.find(jid);
  if (it == records_.end() || it->second.updated_us + kTrackTtlUs <= now_us) {
    if (!start) return;
    if (it != records_.end()) expiry_.erase({it->second.updated_us + kTrackTtlUs, jid});
    it = records_.insert_or_assign(jid, TrackRecord{.jid = jid}).first;
  } else if (it->second.state.empty() && !start) {
    return;  // not followed: only TRACK SET's values
  }
  it->second.state = state;
  Save(it->second, now_us, out);
}

size_t TrackBook::Expire(int64_t now_us, size_t limit, std::vector<Change>& out) {
  size_t n = 0;
  while (n < limit && !expiry_.empty() && expiry_.begin()->first <= now_us) {
    std::string jid = expiry_.begin()->second;
    expiry_.erase(expiry_.begin());
    records_.erase(jid);
    out.push_back(RecordChange(kTrackSpace, jid, std::nullopt));
    ++n;
  }
  return n;
}

void TrackBook::Clear() {
  records_.clear();
  expiry_.clear();
}

}  // namespace bulkhead
