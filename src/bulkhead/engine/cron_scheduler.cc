#include "bulkhead/engine/cron_scheduler.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "bulkhead/engine/job_parser.h"
#include "bulkhead/util/time_format.h"

namespace bulkhead {

CronScheduler::CronScheduler(boost::asio::io_context& io, const Clock& clock, Store& store,
                             std::vector<CronEntry> entries, Rng& rng, PushFn push)
    : clock_(clock), store_(store), rng_(rng), push_(std::move(push)), timer_(io, clock) {
  for (auto& e : entries) entries_.push_back(Entry{std::move(e)});
}

CronScheduler::~CronScheduler() { Stop(); }

void CronScheduler::Start() {
  if (entries_.empty()) return;
  store_.cron_claims().List(alive_.Guard([this](Result<std::map<std::string, TimePoint>> firings) {
    if (!firings.ok()) {
      spdlog::warn("cron: reading the last firings failed ({}); looking anyway",
                   firings.status().message());
    } else {
      for (auto& e : entries_) {
        auto it = firings->find(e.config.name);
        if (it != firings->end()) e.last_run = e.attempted = it->second;
      }
    }
    if (stopped_) return;
    Tick();
  }));
}

void CronScheduler::Stop() {
  stopped_ = true;
  timer_.Cancel();
}

void CronScheduler::Tick() {
  RunOnce();
  timer_.ExpiresAfter(kTick);
  timer_.AsyncWait([this](boost::system::error_code ec) {
    if (!ec && !stopped_) Tick();
  });
}

void CronScheduler::RunOnce() {
  TimePoint now = clock_.Now();
  for (size_t i = 0; i < entries_.size(); ++i) {
    Entry& e = entries_[i];
    std::optional<TimePoint> latest = e.config.schedule.Latest(now);
    if (!latest || now - *latest >= kCatchUp) continue;
    if (e.attempted && *latest <= *e.attempted) continue;
    if (!e.attempted) {  // never fired: start with the latest due time
      Fire(i, *latest);
      continue;
    }
    // Every due time after the last one of the last minute, in order (a late tick, a restart).
    for (TimePoint due = e.config.schedule.Next(std::max(*e.attempted, now - kCatchUp)); due <= now;
         due = e.config.schedule.Next(due)) {
      Fire(i, due);
    }
  }
}

void CronScheduler::Fire(size_t index, TimePoint due) {
  Entry& e = entries_[index];
  std::optional<TimePoint> before = e.attempted;
  e.attempted = due;
  store_.cron_claims().Claim(
      e.config.name, due, alive_.Guard([this, index, due, before](Result<bool> claimed) {
        Entry& e = entries_[index];
        if (!claimed.ok()) {
          // Not claimed: the next look tries again from this due time while it is recent. Claims
          // of several due times (a catch-up) fail together when the store is down; the answers
          // come in order, and each may only move `attempted` back, so the earliest failed due
          // time is where the next look starts.
          if (!before) {
            e.attempted.reset();
          } else if (e.attempted && *before < *e.attempted) {
            e.attempted = before;
          }
          spdlog::warn("cron {}: claiming the firing due {} failed: {}", e.config.name,
                       FormatRfc3339(due), claimed.status().message());
          return;
        }
        if (!e.last_run || *e.last_run < due) e.last_run = due;
        if (!*claimed) {
          spdlog::debug(
              "cron {}: the firing due {} was claimed before (another node, or an "
              "earlier run)",
              e.config.name, FormatRfc3339(due));
          return;
        }
        PushFiring(index, due);
      }));
}

void CronScheduler::PushFiring(size_t index, TimePoint due) {
  Entry& e = entries_[index];
  nlohmann::json doc = nlohmann::json::parse(e.config.job_json);
  // A fresh jid per firing; the due time and entry make it unique even with a scripted Rng.
  doc["jid"] = fmt::format("{:016x}{:x}{:x}", rng_.Next64(), ToUnixMicros(due), index);
  auto job = ParseJobDocument(std::move(doc), clock_.Now());
  if (!job.ok()) {
    e.lost++;
    spdlog::error("cron {}: its job is refused: {}", e.config.name, job.status().message());
    return;
  }
  std::string label = job->jobtype + "/" + job->jid;
  push_(std::move(*job), alive_.Guard([this, index, due, label](Status s) {
    Entry& e = entries_[index];
    if (s.ok()) {
      e.enqueued++;
      spdlog::info("cron {}: enqueueing {} (due {})", e.config.name, label, FormatRfc3339(due));
    } else {
      e.lost++;
      spdlog::warn("cron {}: unable to push {} (due {}), this firing is lost: {}", e.config.name,
                   label, FormatRfc3339(due), s.message());
    }
  }));
}

std::vector<CronEntrySnapshot> CronScheduler::Snapshot(TimePoint now) const {
  std::vector<CronEntrySnapshot> out;
  for (const Entry& e : entries_) {
    out.push_back(CronEntrySnapshot{e.config.name, e.config.schedule.text(),
                                    e.config.schedule.Next(now), e.last_run, e.enqueued, e.lost});
  }
  return out;
}

}  // namespace bulkhead
