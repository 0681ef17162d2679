#include "bulkhead/engine/unique_jobs.h"

#include <openssl/evp.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "bulkhead/util/hex.h"

namespace bulkhead {
namespace {

using nlohmann::json;

const json* CustomField(const json& doc, const char* name) {
  auto custom = doc.find("custom");
  if (custom == doc.end() || !custom->is_object()) return nullptr;
  auto it = custom->find(name);
  return it == custom->end() ? nullptr : &*it;
}

std::string Sha256Hex(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &len, EVP_sha256(), nullptr);
  return HexLower(digest, len);
}

}  // namespace

std::string UniqueKey(const std::string& jobtype, const json& args, const std::string& queue) {
  // nlohmann::json keeps object members sorted by key: dump() is canonical.
  return Sha256Hex(jobtype + '\n' + queue + '\n' + args.dump());
}

bool UniqueUntilStart(const json& doc) {
  const json* until = CustomField(doc, "unique_until");
  return until && until->is_string() && until->get<std::string>() == "start";
}

Result<std::optional<UniqueLock>> UniqueLockFor(const json& doc, const JobRecord& job,
                                                TimePoint now) {
  const json* until = CustomField(doc, "unique_until");
  if (until && !(until->is_string() && (until->get<std::string>() == "success" ||
                                        until->get<std::string>() == "start"))) {
    return Status::InvalidArgument("custom.unique_until must be \"success\" or \"start\", got " +
                                   until->dump());
  }
  const json* unique_for = CustomField(doc, "unique_for");
  if (!unique_for || unique_for->is_null()) return std::optional<UniqueLock>();
  // Faktory's wiki warns about "600" (a string): it must be a number.
  if (!unique_for->is_number() || !std::isfinite(unique_for->get<double>()) ||
      unique_for->get<double>() <= 0 || unique_for->get<double>() > 1e9) {
    return Status::InvalidArgument(
        "custom.unique_for must be a positive number of seconds (at most 1e9), got " +
        unique_for->dump());
  }
  auto args = doc.find("args");
  TimePoint from = now;
  if (job.state == JobState::kScheduled) from = std::max(now, FromUnixMicros(job.score));
  auto length = std::chrono::duration_cast<Duration>(
      std::chrono::duration<double>(unique_for->get<double>()));
  return std::optional<UniqueLock>(UniqueLock{
      UniqueKey(job.jobtype, args != doc.end() ? *args : json::array(), job.queue), from + length});
}

}  // namespace bulkhead
