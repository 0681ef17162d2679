// JobKind: the job types the server runs itself (its built-in deliveries), and their Faktory
// jobtype names. Every other jobtype belongs to the app's own workers.
#pragma once

#include <optional>
#include <string_view>

namespace bulkhead {

enum class JobKind { kWebPush, kActivityPub, kWebhook };

// "webpush", "activitypub", "webhook": the Faktory jobtype names of the built-in kinds.
const char* JobKindName(JobKind kind);
// The kind named `name` (exact, lowercase), or nullopt for any other jobtype.
std::optional<JobKind> JobKindFromName(std::string_view name);

}  // namespace bulkhead
