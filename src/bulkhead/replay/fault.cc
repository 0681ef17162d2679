#include "bulkhead/replay/fault.h"

#include <array>

namespace bulkhead {
namespace {

struct FaultInfo {
  Fault fault;
  std::string_view name;
  std::string_view description;
};

constexpr std::array<FaultInfo, 8> kFaults = {{
    {Fault::kNone, "none", "answers 201 at once"},
    {Fault::kBlackhole, "blackhole", "accepts and never answers"},
    {Fault::kSlowDrip, "slow-drip", "sends headers, then drips 1 body byte per 5 s"},
    {Fault::kRefuse, "refuse", "refuses connections"},
    {Fault::kReset, "reset", "resets the connection after reading the request"},
    {Fault::k5xx, "5xx", "answers 500 at once"},
    {Fault::k429, "429", "answers 429 with Retry-After: 30"},
    {Fault::kLate, "late", "answers 201 after 40 s"},
}};

}  // namespace

Result<Fault> ParseFault(std::string_view name) {
  for (const auto& f : kFaults) {
    if (f.name == name) return f.fault;
  }
  std::string valid;
  for (const auto& f : kFaults) {
    if (!valid.empty()) valid += ", ";
    valid += f.name;
  }
  return Status::InvalidArgument("unknown fault \"" + std::string(name) + "\" (valid: " + valid +
                                 ")");
}

std::string_view FaultName(Fault fault) {
  for (const auto& f : kFaults) {
    if (f.fault == fault) return f.name;
  }
  return "?";
}

std::string_view FaultDescription(Fault fault) {
  for (const auto& f : kFaults) {
    if (f.fault == fault) return f.description;
  }
  return "?";
}

const std::vector<Fault>& AllFaults() {
  static const std::vector<Fault> all = [] {
    std::vector<Fault> v;
    for (const auto& f : kFaults) {
      if (f.fault != Fault::kNone) v.push_back(f.fault);
    }
    return v;
  }();
  return all;
}

}  // namespace bulkhead
