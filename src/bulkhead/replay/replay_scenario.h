// One scenario of `bulkhead replay` (see replay.h): the rig (a healthy and a faulty push endpoint,
// a bulkhead server and the timeline worker as child processes on loopback), the paced load, the
// per-second samples, then the drain and what was measured.
#pragma once

#include <ostream>
#include <string>

#include "bulkhead/replay/fault.h"
#include "bulkhead/replay/replay.h"
#include "bulkhead/replay/replay_report.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

// Runs one scenario of options.duration_s with the faulty endpoint behaving as `fault`, named
// `name` in the result. Progress lines go to `err` (when options.progress). Blocks until the rig
// is torn down; an error names what failed to start or to load.
Result<ScenarioResult> RunScenario(const ReplayOptions& options, Fault fault, std::string name,
                                   std::ostream& err);

}  // namespace bulkhead
