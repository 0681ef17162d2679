#include "bulkhead/metrics/top_n_labels.h"

#include <algorithm>
#include <cmath>

namespace bulkhead {

namespace {

TopNLabelsOptions Clamp(TopNLabelsOptions o) {
  if (o.max_tracked < 1) o.max_tracked = 1;
  if (o.top_n > o.max_tracked) o.top_n = o.max_tracked;
  if (!(o.stickiness >= 1.0)) o.stickiness = 1.0;
  if (o.refresh_interval <= Duration::zero()) o.refresh_interval = std::chrono::seconds(1);
  if (o.half_life <= Duration::zero()) o.half_life = std::chrono::seconds(1);
  return o;
}

// Scores below this after decay are forgotten (a host idle for ~20 half-lives).
constexpr double kForgetBelow = 1e-6;

}  // namespace

TopNLabels::TopNLabels(const Clock& clock, TopNLabelsOptions options)
    : clock_(clock), options_(Clamp(options)), last_refresh_(clock.Now()) {}

void TopNLabels::MaybeRefreshLocked(TimePoint now) {
  Duration elapsed = now - last_refresh_;
  if (elapsed < options_.refresh_interval) return;
  last_refresh_ = now;

  double half_lives = std::chrono::duration<double>(elapsed).count() /
                      std::chrono::duration<double>(options_.half_life).count();
  double factor = std::exp2(-half_lives);
  for (auto it = scores_.begin(); it != scores_.end();) {
    it->second *= factor;
    if (it->second < kForgetBelow) {
      it = scores_.erase(it);
    } else {
      ++it;
    }
  }

  // Rank by score, members boosted by stickiness; ties broken by name for determinism.
  std::vector<std::pair<double, const std::string*>> ranked;
  ranked.reserve(scores_.size());
  for (const auto& [host, score] : scores_) {
    double s = members_.contains(host) ? score * options_.stickiness : score;
    ranked.emplace_back(s, &host);
  }
  size_t n = std::min(options_.top_n, ranked.size());
  std::partial_sort(ranked.begin(), ranked.begin() + n, ranked.end(),
                    [](const auto& a, const auto& b) {
                      return a.first != b.first ? a.first > b.first : *a.second < *b.second;
                    });
  std::set<std::string, std::less<>> members;
  for (size_t i = 0; i < n; ++i) members.insert(*ranked[i].second);
  members_ = std::move(members);
}

void TopNLabels::EvictOneLocked() {
  auto victim = scores_.end();
  for (auto it = scores_.begin(); it != scores_.end(); ++it) {
    if (members_.contains(it->first)) continue;
    if (victim == scores_.end() || it->second < victim->second) victim = it;
  }
  if (victim != scores_.end()) scores_.erase(victim);
}

void TopNLabels::Record(std::string_view host, double weight) {
  std::lock_guard<std::mutex> lock(mu_);
  MaybeRefreshLocked(clock_.Now());
  RecordLocked(host, weight);
}

void TopNLabels::RecordLocked(std::string_view host, double weight) {
  if (!(weight > 0.0) || host == kOther) return;
  auto it = scores_.find(host);
  if (it == scores_.end()) {
    if (scores_.size() >= options_.max_tracked) EvictOneLocked();
    if (scores_.size() >= options_.max_tracked) return;  // every tracked host is a member
    it = scores_.emplace(std::string(host), 0.0).first;
  }
  it->second += weight;
  if (members_.size() < options_.top_n) members_.insert(it->first);  // rule 2: free slot
}

std::string TopNLabels::Label(std::string_view host) {
  std::lock_guard<std::mutex> lock(mu_);
  MaybeRefreshLocked(clock_.Now());
  return LabelLocked(host);
}

std::string TopNLabels::LabelLocked(std::string_view host) const {
  if (host != kOther && members_.contains(host)) return std::string(host);
  return std::string(kOther);
}

std::string TopNLabels::RecordAndLabel(std::string_view host, double weight) {
  // Once a job on the loop: one lock and one clock reading for both.
  std::lock_guard<std::mutex> lock(mu_);
  MaybeRefreshLocked(clock_.Now());
  RecordLocked(host, weight);
  return LabelLocked(host);
}

std::vector<MetricSample> TopNLabels::Fold(
    const std::vector<std::pair<std::string, double>>& per_host) {
  std::map<std::string, double, std::less<>> sums;
  bool any_folded = false;
  double other = 0.0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    MaybeRefreshLocked(clock_.Now());
    for (const auto& [host, value] : per_host) {
      if (host != kOther && members_.contains(host)) {
        sums[host] += value;
      } else {
        any_folded = true;
        other += value;
      }
    }
  }
  if (any_folded) sums[std::string(kOther)] += other;
  std::vector<MetricSample> out;
  out.reserve(sums.size());
  for (auto& [label, value] : sums) out.push_back({{label}, value});
  return out;
}

std::vector<std::string> TopNLabels::Members() {
  std::lock_guard<std::mutex> lock(mu_);
  MaybeRefreshLocked(clock_.Now());
  return {members_.begin(), members_.end()};
}

size_t TopNLabels::tracked() const {
  std::lock_guard<std::mutex> lock(mu_);
  return scores_.size();
}

}  // namespace bulkhead
