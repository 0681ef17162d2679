// PushCommand: `bulkhead push [JOB] [--url URL] [--ca FILE]`, pushing one job (JSON from the
// argument, else stdin) to a running server. A job without `jid` gets a random one and a job
// without `args` an empty array; the jid pushed is printed.
//
// Thread-compatible; used once per process by main().
#pragma once

#include <istream>
#include <ostream>
#include <string>

#include "bulkhead/client/connect_options.h"
#include "bulkhead/util/status.h"

namespace CLI {
class App;
}

namespace bulkhead {

class PushCommand {
 public:
  // Registers `push` on `app`.
  explicit PushCommand(CLI::App& app);
  PushCommand(const PushCommand&) = delete;
  PushCommand& operator=(const PushCommand&) = delete;

  // True when the parsed command line chose `push`.
  bool selected() const;
  // Pushes the job (read from `in` when the command line has none) and writes its jid to `out`.
  // Errors: the job is not a JSON object, the server cannot be reached, or it refused the job.
  Status Run(std::istream& in, std::ostream& out);

 private:
  CLI::App* command_ = nullptr;
  std::string job_text_;
  ConnectOptions connect_;
};

}  // namespace bulkhead
