// The Queues page (size, latency, paused; pause/resume/clear through a confirmation page whose
// form POSTs the change) and that confirmation page. Pure renderers.
#pragma once

#include <string>

#include "bulkhead/dashboard/layout.h"
#include "bulkhead/engine/engine_snapshot.h"

namespace bulkhead::dashboard {

std::string RenderQueuesPage(const PageContext& ctx, const EngineSnapshot& engine);

// `action`: "pause", "resume" or "clear" (the caller checked it).
std::string RenderQueueConfirmPage(const PageContext& ctx, const std::string& queue,
                                   const std::string& action, size_t size);

}  // namespace bulkhead::dashboard
