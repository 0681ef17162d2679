#include "bulkhead/store/embedded_holders.h"

namespace bulkhead {

void EmbeddedHolders::Set(const std::string& jid, const std::string& wid, Done durable) {
  context_.Apply(std::move(durable), [&](std::vector<Change>& out) {
    context_.state().SetHolder(jid, wid, out);
    return Status::Ok();
  });
}

void EmbeddedHolders::List(size_t limit, HeldJobsCallback cb) {
  // After the payloads of jobs just fetched are back (embedded_context.h).
  context_.AfterLoads([this, limit, cb = std::move(cb)] {
    std::vector<HeldJob> held;
    for (auto& [job, wid] : context_.state().ListHeld(limit)) {
      held.push_back(HeldJob{std::move(job), std::move(wid)});
    }
    cb(std::move(held));
  });
}

}  // namespace bulkhead
