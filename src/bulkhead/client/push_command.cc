#include "bulkhead/client/push_command.h"

#include <CLI/CLI.hpp>
#include <iterator>
#include <nlohmann/json.hpp>

#include "bulkhead/util/json.h"
#include "bulkhead/util/rng.h"

namespace bulkhead {
namespace {

// Only keeps parsing bounded: the server decides the depth it accepts (max_json_depth, at most
// 1000), so no job a server could take is refused here.
constexpr int kMaxJobDepth = 1000;

}  // namespace

PushCommand::PushCommand(CLI::App& app) {
  command_ = app.add_subcommand("push", "Push one job (JSON from the argument or stdin).");
  command_->add_option("job", job_text_, "job JSON; read from stdin when absent");
  connect_.AddTo(*command_);
}

bool PushCommand::selected() const { return command_->parsed(); }

Status PushCommand::Run(std::istream& in, std::ostream& out) {
  if (job_text_.empty()) {
    job_text_.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  auto parsed = ParseJson(job_text_, kMaxJobDepth);
  if (!parsed.ok() || !parsed->is_object()) {
    return Status::InvalidArgument("the job must be a JSON object");
  }
  nlohmann::json& doc = *parsed;
  if (!doc.contains("jid")) doc["jid"] = RandomHex(12);
  if (!doc.contains("args")) doc["args"] = nlohmann::json::array();
  auto client = connect_.Connect();
  if (!client.ok()) return client.status();
  if (Status s = (*client)->Push(doc.dump()); !s.ok()) return s;
  out << doc["jid"].get<std::string>() << "\n";
  (*client)->End();
  return Status::Ok();
}

}  // namespace bulkhead
