#include "bulkhead/store/embedded_host_states.h"

namespace bulkhead {

void EmbeddedHostStates::Put(const HostStateRecord& record, Done durable) {
  context_.Apply(std::move(durable), [&](std::vector<Change>& out) {
    context_.state().PutHostState(record, out);
    return Status::Ok();
  });
}

void EmbeddedHostStates::Remove(const std::string& host, Done durable) {
  context_.Apply(std::move(durable), [&](std::vector<Change>& out) {
    context_.state().RemoveHostState(host, out);
    return Status::Ok();
  });
}

void EmbeddedHostStates::List(HostStatesCallback cb) {
  const auto& stored = context_.state().host_states();
  std::vector<HostStateRecord> records;
  records.reserve(stored.size());
  for (const auto& [host, record] : stored) records.push_back(record);
  cb(std::move(records));
}

}  // namespace bulkhead
