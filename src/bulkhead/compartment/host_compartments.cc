#include "bulkhead/compartment/host_compartments.h"

#include <algorithm>
#include <cassert>
#include <utility>

namespace bulkhead {

struct HostCompartments::Candidate {
  Compartment* compartment;
  int want;  // fresh + parked, decremented per grant
  int fresh;
};

HostCompartments::HostCompartments(const HostCompartmentsConfig& config, Rng& rng)
    : config_(config), global_max_(std::max(1, config.global_max_in_flight)), rng_(rng) {}

Compartment& HostCompartments::Get(std::string_view host, TimePoint now) {
  auto it = compartments_.find(host);
  if (it == compartments_.end()) {
    CompartmentConfig config = config_.compartment;
    for (const CapOverride& o : config_.cap_overrides) {
      if (host.substr(0, o.prefix.size()) == o.prefix) {
        config.limit = o.limit;
        break;
      }
    }
    it = compartments_
             .emplace(std::string(host),
                      std::make_unique<Compartment>(std::string(host), config, rng_, now))
             .first;
    it->second->AttachIndex(&index_);
    it->second->SetNodes(nodes_);
  }
  return *it->second;
}

void HostCompartments::SetNodes(int nodes) {
  nodes_ = std::max(1, nodes);
  global_max_ = std::max(1, std::max(1, config_.global_max_in_flight) / nodes_);
  for (auto& entry : compartments_) entry.second->SetNodes(nodes_);
}

int HostCompartments::host_cap_max() const {
  AdaptiveLimit probe(config_.compartment.limit);
  probe.SetNodes(nodes_);
  return probe.max_limit();
}

int HostCompartments::host_cap_min() const {
  AdaptiveLimit probe(config_.compartment.limit);
  probe.SetNodes(nodes_);
  return probe.min_limit();
}

Compartment* HostCompartments::Find(std::string_view host) {
  auto it = compartments_.find(host);
  return it == compartments_.end() ? nullptr : it->second.get();
}

const Compartment* HostCompartments::Find(std::string_view host) const {
  auto it = compartments_.find(host);
  return it == compartments_.end() ? nullptr : it->second.get();
}

bool HostCompartments::IsUnavailable(std::string_view host, TimePoint now) const {
  const Compartment* c = Find(host);
  return c != nullptr && c->unavailable(now);
}

void HostCompartments::Restore(std::string_view host, const CompartmentState& state,
                               TimePoint now) {
  Get(host, now).Restore(state, now);
}

Status HostCompartments::Park(std::string_view host, std::string job_id, TimePoint now) {
  return Get(host, now).Park(std::move(job_id));
}

std::vector<HostCompartments::Candidate> HostCompartments::Candidates(
    std::span<const HostDemand> fresh, TimePoint now) {
  // A dead host with a long parked queue costs one Check per call.
  std::vector<std::pair<Compartment*, int>> fresh_hosts;
  for (const HostDemand& d : fresh) {
    if (d.fresh > 0) fresh_hosts.emplace_back(&Get(d.host, now), d.fresh);
  }
  std::sort(fresh_hosts.begin(), fresh_hosts.end(),
            [](const auto& a, const auto& b) { return CompartmentByHost()(a.first, b.first); });
  std::vector<Candidate> cands;
  auto add = [&](Compartment* c, int fresh_count) {
    if (!cands.empty() && cands.back().compartment == c) {  // the same host listed twice
      cands.back().want += fresh_count;
      cands.back().fresh += fresh_count;
      return;
    }
    if (c->Check(now, /*ignore_parked=*/true) != ParkReason::kNone) return;
    cands.push_back({c, fresh_count + static_cast<int>(c->parked_count()), fresh_count});
  };
  auto f = fresh_hosts.begin();
  for (Compartment* p : index_.parked) {
    for (; f != fresh_hosts.end() && !CompartmentByHost()(p, f->first); ++f) {
      add(f->first, f->second);
    }
    add(p, 0);
  }
  for (; f != fresh_hosts.end(); ++f) add(f->first, f->second);
  return cands;
}

void HostCompartments::GrantPass(std::vector<Candidate>& cands, int fair_share, TimePoint now,
                                 std::vector<Grant>& grants) {
  bool progress = true;
  while (progress && global_in_flight_ < global_max_) {
    progress = false;
    for (Candidate& c : cands) {
      if (global_in_flight_ >= global_max_) break;
      if (c.want <= 0) continue;
      Compartment& comp = *c.compartment;
      if (fair_share > 0 && comp.in_flight() >= fair_share) continue;
      Grant g;
      g.host = comp.host();
      if (comp.parked_count() > 0) {
        std::optional<ReadyJob> job = comp.NextReady(now);
        if (!job) {
          c.want = 0;  // blocked by its own compartment for the rest of this call
          continue;
        }
        g.permit = job->permit;
        g.parked_job_id = std::move(job->job_id);
      } else {
        AcquireResult r = comp.TryAcquire(now);
        if (!r.granted) {
          c.want = 0;
          continue;
        }
        g.permit = r.permit;
      }
      if (grants.empty()) last_first_served_ = g.host;
      --c.want;
      ++global_in_flight_;
      grants.push_back(std::move(g));
      progress = true;
    }
    std::erase_if(cands, [](const Candidate& c) { return c.want <= 0; });
  }
}

std::vector<Grant> HostCompartments::Schedule(std::span<const HostDemand> fresh, TimePoint now) {
  std::vector<Grant> grants;
  std::vector<Candidate> cands = Candidates(fresh, now);
  if (cands.empty()) return grants;

  // Round robin: start after the host served first last time.
  auto start = std::upper_bound(
      cands.begin(), cands.end(), last_first_served_,
      [](const std::string& h, const Candidate& c) { return h < c.compartment->host(); });
  std::rotate(cands.begin(), start, cands.end());

  // Contention: could the hosts able to start now take more than the free global slots? Active
  // hosts: those holding slots plus those that could start one now. Under contention a first
  // pass stops each host at its fair share, a second hands out what is left.
  const int free_slots = global_max_ - global_in_flight_;
  int could_take = 0;
  int active = index_.holders;
  for (const Candidate& c : cands) {
    const Compartment& comp = *c.compartment;
    could_take += std::min(c.want, std::max(1, comp.limit() - comp.in_flight()));
    if (comp.in_flight() == 0) ++active;
  }
  const bool contended = could_take > free_slots;
  const int fair_share = std::max(1, global_max_ / std::max(1, active));
  GrantPass(cands, contended ? fair_share : 0, now, grants);
  if (contended) GrantPass(cands, 0, now, grants);
  return grants;
}

void HostCompartments::OnResult(const Grant& grant, const Outcome& outcome, Duration latency,
                                TimePoint now, std::optional<TimePoint> retry_after) {
  if (global_in_flight_ > 0) --global_in_flight_;
  Compartment* c = Find(grant.host);
  assert(c != nullptr && "compartments with attempts in flight are never evicted");
  if (c != nullptr) c->OnResult(grant.permit, outcome, latency, now, retry_after);
}

size_t HostCompartments::EvictIdle(TimePoint now) {
  size_t evicted = 0;
  for (auto it = compartments_.begin(); it != compartments_.end();) {
    if (it->second->Evictable(now, config_.idle_eviction, config_.failing_retention)) {
      it = compartments_.erase(it);
      ++evicted;
    } else {
      ++it;
    }
  }
  return evicted;
}

std::optional<TimePoint> HostCompartments::NextWakeup(TimePoint now) const {
  std::optional<TimePoint> best;
  for (const Compartment* c : index_.parked) {
    std::optional<TimePoint> t = c->NextWakeup(now);
    if (t && (!best || *t < *best)) best = t;
  }
  return best;
}

std::vector<CompartmentSnapshot> HostCompartments::Snapshot(TimePoint now) const {
  std::vector<CompartmentSnapshot> out;
  out.reserve(compartments_.size());
  for (const auto& [host, c] : compartments_) out.push_back(c->Snapshot(now));
  return out;
}

}  // namespace bulkhead
