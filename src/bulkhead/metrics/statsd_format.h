// StatsD / DogStatsD line format for registry snapshots (statsd/statsd `docs/metric_types.md`;
// DogStatsD's https://docs.datadoghq.com/developers/dogstatsd/datagram_shell). Pure formatting, no
// I/O; StatsdEmitter (statsd_emitter.h) sends what this produces.
//
// Mapping from a registry family to lines (prefix "bulkhead", metric bulkhead_queue_size):
//   name      <prefix>.<metric without its "bulkhead_" namespace>   -> bulkhead.queue_size
//             (with an empty prefix the metric name is used as is)
//   gauge     <name>:<value>|g                 absolute value at this emission
//   counter   <name>:<delta>|c                 increase since the previous emission (StatsD
//                                              counters are deltas, reset at each flush)
//   histogram <name>.count:<delta>|c, <name>.sum:<delta>|c, and per bucket
//             <name>.bucket:<delta>|c with label le (cumulative bucket, like Prometheus)
//   labels    DogStatsD: tags  |#queue:push,env:prod   (configured tags first, then labels)
//             plain:     name segments  bulkhead.queue_size.queue.push   (label name, value)
// Plain StatsD treats a signed gauge value as a delta, so a negative gauge is sent as
// "<name>:0|g\n<name>:-3|g" (kept in one datagram). NaN and infinite values are not sent.
// Characters outside [A-Za-z0-9_-] in plain name segments, and ',', '|', '#', whitespace in
// DogStatsD tags, become '_'.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bulkhead/metrics/registry.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

enum class StatsdFlavor { kPlain, kDogStatsd };

// "statsd" or "dogstatsd" (the values of the [statsd] flavor config key).
Result<StatsdFlavor> ParseStatsdFlavor(std::string_view s);

// A DogStatsD tag "key:value" (or a bare "key"). InvalidArgument if empty or containing ',', '|',
// '#' or whitespace.
Result<std::pair<std::string, std::string>> ParseStatsdTag(std::string_view s);

// Thread-compatible (StatsdEmitter serialises calls). Turns snapshots into StatsD lines, keeping
// the previous value of every counter series to send deltas.
class StatsdFormatter {
 public:
  StatsdFormatter(StatsdFlavor flavor, std::string prefix,
                  std::vector<std::pair<std::string, std::string>> tags);

  // One entry per metric line (a negative plain gauge's two lines form one entry).
  std::vector<std::string> Format(const std::vector<FamilySnapshot>& families);

 private:
  std::string MetricName(std::string_view family, std::string_view suffix,
                         const std::vector<std::string>& label_names,
                         const std::vector<std::string>& label_values) const;
  std::string Tags(const std::vector<std::string>& label_names,
                   const std::vector<std::string>& label_values) const;
  // Appends the line(s) for one value; skips non-finite values.
  void Emit(std::vector<std::string>& out, std::string_view family, std::string_view suffix,
            const std::vector<std::string>& label_names,
            const std::vector<std::string>& label_values, double value, char type);
  double CounterDelta(const std::string& key, double value);

  // Constant after construction.
  const StatsdFlavor flavor_;
  const std::string prefix_;
  const std::string global_tags_;  // "k:v,k2:v2" (DogStatsD), may be empty

  std::map<std::string, double> previous_;  // counter series key -> value at last Format
};

// Packs lines into datagram payloads of at most `max_bytes`, joined by '\n'. A single line longer
// than `max_bytes` travels alone (the network may still drop it).
std::vector<std::string> PackDatagrams(const std::vector<std::string>& lines, size_t max_bytes);

}  // namespace bulkhead
