#include "bulkhead/store/batch_book.h"

#include <nlohmann/json.hpp>

namespace bulkhead {
namespace {

using nlohmann::json;

json CallbackJson(const JobRecord& job) {
  if (job.jid.empty()) return nullptr;
  return json{{"jid", job.jid},
              {"queue", job.queue},
              {"jobtype", job.jobtype},
              {"payload", job.payload},
              {"reserve_for", job.reserve_for_s}};
}

JobRecord CallbackFromJson(const json& j) {
  JobRecord job;
  if (!j.is_object()) return job;
  job.jid = j.value("jid", "");
  job.queue = j.value("queue", "");
  job.jobtype = j.value("jobtype", "");
  job.payload = j.value("payload", "");
  job.reserve_for_s = j.value("reserve_for", 1800);
  job.state = JobState::kScheduled;
  return job;
}

std::string EncodeBatch(const BatchRecord& b) {
  return json{{"bid", b.bid},
              {"parent_bid", b.parent_bid},
              {"description", b.description},
              {"created_us", b.created_us},
              {"committed", b.committed},
              {"expires_us", b.expires_us},
              {"total", b.total},
              {"pending", b.pending},
              {"failed", b.failed},
              {"executed", b.executed},
              {"complete_st", b.complete_st},
              {"success_st", b.success_st},
              {"told_parent", b.told_parent},
              {"complete", CallbackJson(b.complete)},
              {"success", CallbackJson(b.success)}}
      .dump();
}

Result<BatchRecord> DecodeBatch(const std::string& text) {
  auto j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Status::InvalidArgument("stored batch is not a JSON object");
  BatchRecord b;
  try {
    b.bid = j.at("bid").get<std::string>();
    b.parent_bid = j.value("parent_bid", "");
    b.description = j.value("description", "");
    b.created_us = j.at("created_us").get<int64_t>();
    b.committed = j.at("committed").get<bool>();
    b.expires_us = j.at("expires_us").get<int64_t>();
    b.total = j.at("total").get<int64_t>();
    b.pending = j.at("pending").get<int64_t>();
    b.failed = j.at("failed").get<int64_t>();
    b.executed = j.at("executed").get<int64_t>();
    b.complete_st = j.value("complete_st", "");
    b.success_st = j.value("success_st", "");
    b.told_parent = j.value("told_parent", 0);
  } catch (const json::exception& e) {
    return Status::InvalidArgument(std::string("stored batch: ") + e.what());
  }
  b.complete = CallbackFromJson(j.value("complete", json()));
  b.success = CallbackFromJson(j.value("success", json()));
  return b;
}

// "A\tB" -> {A, B}.
std::pair<std::string, std::string> SplitTab(const std::string& s) {
  size_t tab = s.find('\t');
  if (tab == std::string::npos) return {s, ""};
  return {s.substr(0, tab), s.substr(tab + 1)};
}

Status NoSuchBatch(const std::string& bid) { return Status::NotFound("No such batch " + bid); }

}  // namespace

Change RecordChange(const char* space, const std::string& key, std::optional<std::string> value) {
  Change c{value ? Change::Kind::kPutRecord : Change::Kind::kDeleteRecord};
  c.name = space;
  c.key = key;
  if (value) c.value = std::move(*value);
  return c;
}

Status BatchBook::Load(const std::string& space, const std::string& key, const std::string& value) {
  if (space == kBatchSpace) {
    auto b = DecodeBatch(value);
    if (!b.ok()) return Status::InvalidArgument("batch " + key + ": " + b.status().message());
    if (b->expires_us != 0) expiry_.emplace(b->expires_us, key);
    batches_[key] = std::move(*b);
  } else if (space == kBatchMemberSpace) {
    auto [bid, status] = SplitTab(value);
    members_[key] = Member{bid, status.empty() ? 'p' : status[0]};
  } else if (space == kBatchCallbackSpace) {
    auto [bid, which] = SplitTab(value);
    callbacks_[key] = Callback{bid, which};
  }
  return Status::Ok();
}

const BatchRecord* BatchBook::Find(const std::string& bid, int64_t now_us) const {
  auto it = batches_.find(bid);
  if (it == batches_.end()) return nullptr;
  if (it->second.expires_us != 0 && it->second.expires_us <= now_us) return nullptr;
  return &it->second;
}

BatchRecord* BatchBook::Live(const std::string& bid, int64_t now_us) {
  return const_cast<BatchRecord*>(Find(bid, now_us));
}

void BatchBook::Save(const BatchRecord& b, std::vector<Change>& out) {
  out.push_back(RecordChange(kBatchSpace, b.bid, EncodeBatch(b)));
}

void BatchBook::SetExpiry(BatchRecord& b, int64_t expires_us) {
  if (b.expires_us != 0) expiry_.erase({b.expires_us, b.bid});
  b.expires_us = expires_us;
  if (expires_us != 0) expiry_.emplace(expires_us, b.bid);
}

Status BatchBook::Create(BatchRecord batch, int64_t now_us, std::vector<Change>& out,
                         BatchEffects& fx) {
  if (batches_.contains(batch.bid)) {
    return Status::AlreadyExists("batch " + batch.bid + " already exists");
  }
  BatchRecord* parent = nullptr;
  if (!batch.parent_bid.empty()) {
    parent = Live(batch.parent_bid, now_us);
    if (!parent) return NoSuchBatch(batch.parent_bid);
  }
  std::string bid = batch.bid;
  int64_t expires_us = batch.created_us + kBatchUncommittedTtlUs;
  batch.expires_us = 0;
  BatchRecord& b = batches_[bid] = std::move(batch);
  SetExpiry(b, expires_us);
  Save(b, out);
  fx.counts.created++;
  if (parent) {
    members_[bid] = Member{parent->bid, 'p'};
    out.push_back(RecordChange(kBatchMemberSpace, bid, parent->bid + "\tp"));
    parent->total++;
    parent->pending++;
    Save(*parent, out);
  }
  return Status::Ok();
}

Status BatchBook::Join(const std::string& bid, const std::string& member, int64_t now_us,
                       std::vector<Change>& out) {
  BatchRecord* b = Live(bid, now_us);
  if (!b) return NoSuchBatch(bid);
  members_[member] = Member{bid, 'p'};
  out.push_back(RecordChange(kBatchMemberSpace, member, bid + "\tp"));
  b->total++;
  b->pending++;
  Save(*b, out);
  return Status::Ok();
}

Status BatchBook::Commit(const std::string& bid, int64_t now_us, std::vector<Change>& out,
                         BatchEffects& fx) {
  BatchRecord* b = Live(bid, now_us);
  if (!b) return NoSuchBatch(bid);
  if (!b->committed) {
    b->committed = true;
    SetExpiry(*b, 0);
    fx.counts.committed++;
  }
  auto up = Settle(*b, now_us, out, fx);
  if (up && !b->parent_bid.empty()) Apply(b->bid, *up, now_us, out, fx);
  return Status::Ok();
}

void BatchBook::OnAck(const std::string& jid, int64_t now_us, std::vector<Change>& out,
                      BatchEffects& fx) {
  if (members_.contains(jid)) {
    Apply(jid, Event::kSucceeded, now_us, out, fx);
    return;
  }
  auto cb = callbacks_.find(jid);
  if (cb == callbacks_.end()) return;
  std::string bid = cb->second.bid;
  bool complete = cb->second.which == "complete";
  callbacks_.erase(cb);
  out.push_back(RecordChange(kBatchCallbackSpace, jid, std::nullopt));
  BatchRecord* b = Live(bid, now_us);
  if (!b) return;
  (complete ? b->complete_st : b->success_st) = "2";
  auto up = Settle(*b, now_us, out, fx);
  if (up && !b->parent_bid.empty()) Apply(bid, *up, now_us, out, fx);
}

void BatchBook::OnFail(const std::string& jid, int64_t now_us, std::vector<Change>& out,
                       BatchEffects& fx) {
  // A failed callback stays "1" (Faktory); it retries like any job.
  if (members_.contains(jid)) Apply(jid, Event::kFailed, now_us, out, fx);
}

void BatchBook::Apply(std::string key, Event e, int64_t now_us, std::vector<Change>& out,
                      BatchEffects& fx) {
  for (;;) {
    BatchRecord* b = ChangeMember(key, e, out);
    if (!b) return;
    auto up = Settle(*b, now_us, out, fx);
    if (!up || b->parent_bid.empty()) return;
    key = b->bid;
    e = *up;
  }
}

BatchRecord* BatchBook::ChangeMember(const std::string& key, Event e, std::vector<Change>& out) {
  auto m = members_.find(key);
  if (m == members_.end()) return nullptr;
  auto found = batches_.find(m->second.bid);
  if (found == batches_.end()) {  // its batch expired or was deleted: forget the member
    members_.erase(m);
    out.push_back(RecordChange(kBatchMemberSpace, key, std::nullopt));
    return nullptr;
  }
  BatchRecord& b = found->second;
  char& st = m->second.status;
  switch (e) {
    case Event::kFailed:
      if (st == 'f') return nullptr;  // counted once per member, not per attempt
      if (st == 'p') b.executed++;
      st = 'f';
      b.failed++;
      break;
    case Event::kRan:
      if (st != 'p') return nullptr;
      st = 'x';
      b.executed++;
      break;
    case Event::kSucceeded:
    case Event::kGone:
      b.pending--;
      if (st == 'f') b.failed--;
      if (st != 'p') b.executed--;
      if (e == Event::kGone) b.total--;
      members_.erase(m);
      out.push_back(RecordChange(kBatchMemberSpace, key, std::nullopt));
      return &b;
  }
  out.push_back(RecordChange(kBatchMemberSpace, key, b.bid + "\t" + std::string(1, st)));
  return &b;
}

std::optional<BatchBook::Event> BatchBook::Settle(BatchRecord& b, int64_t now_us,
                                                  std::vector<Change>& out, BatchEffects& fx) {
  std::optional<Event> up;
  if (b.committed) {
    bool all_ran = b.pending == b.executed;
    if (!b.complete.jid.empty() && b.complete_st.empty() && all_ran) {
      Fire(b, /*complete=*/true, now_us, out, fx);
    }
    bool complete_done = b.complete.jid.empty() ? all_ran : b.complete_st == "2";
    if (!b.success.jid.empty() && b.success_st.empty() && b.pending == 0 && complete_done) {
      Fire(b, /*complete=*/false, now_us, out, fx);
    }
    bool success_done =
        b.success.jid.empty() ? b.pending == 0 && complete_done : b.success_st == "2";
    if (success_done && b.told_parent < 2) {
      b.told_parent = 2;
      fx.counts.succeeded++;
      SetExpiry(b, now_us + kBatchRetentionUs);
      up = Event::kSucceeded;
    } else if (complete_done && b.told_parent < 1) {
      b.told_parent = 1;
      up = Event::kRan;
    }
  }
  Save(b, out);
  return up;
}

void BatchBook::Fire(BatchRecord& b, bool complete, int64_t now_us, std::vector<Change>& out,
                     BatchEffects& fx) {
  JobRecord job = complete ? b.complete : b.success;
  job.state = JobState::kScheduled;
  job.score = now_us;
  const char* which = complete ? "complete" : "success";
  callbacks_[job.jid] = Callback{b.bid, which};
  out.push_back(RecordChange(kBatchCallbackSpace, job.jid, b.bid + "\t" + which));
  (complete ? b.complete_st : b.success_st) = "1";
  fx.fire.push_back(std::move(job));
}

size_t BatchBook::Expire(int64_t now_us, size_t limit, std::vector<Change>& out, BatchEffects& fx) {
  size_t n = 0;
  while (n < limit && !expiry_.empty() && expiry_.begin()->first <= now_us) {
    std::string bid = expiry_.begin()->second;
    expiry_.erase(expiry_.begin());
    auto it = batches_.find(bid);
    if (it == batches_.end()) continue;
    bool uncommitted = !it->second.committed;
    bool has_parent = !it->second.parent_bid.empty();
    batches_.erase(it);
    out.push_back(RecordChange(kBatchSpace, bid, std::nullopt));
    ++n;
    if (!uncommitted) continue;
    fx.counts.expired++;
    // A child that expired uncommitted never was: its parent stops waiting for it.
    if (has_parent) Apply(bid, Event::kGone, now_us, out, fx);
  }
  return n;
}

void BatchBook::Clear() {
  batches_.clear();
  expiry_.clear();
  members_.clear();
  callbacks_.clear();
}

}  // namespace bulkhead
