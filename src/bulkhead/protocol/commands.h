// The FWP command table: each verb's handler (parse → engine operation → reply) and the
// properties the session honours before and after running it (docs/protocol.md). A new command is
// one handler and one table entry in commands.cc.
#pragma once

#include <span>
#include <string_view>

#include "bulkhead/protocol/session.h"

namespace bulkhead {

// Replies through `responder` exactly once, now or later.
using CommandHandler = void (*)(Session& session, std::string_view args, Responder responder);

struct Command {
  std::string_view verb;
  CommandHandler handler = nullptr;  // null for an Enterprise-only command
  // Only after a successful HELLO: as a connection's first line it closes the connection without
  // a reply.
  bool needs_identity = true;
  // The handshake (HELLO): accepted as a first line only with a JSON object as its argument.
  bool opens_session = false;
  // Its reply may come later (a FETCH waits for a job): the session runs no further line of the
  // connection until it is answered (but see overlaps_itself).
  bool may_block = false;
  // With may_block: the same command right behind an unanswered one runs at once instead of
  // waiting, so a client's pipelined FETCHes reach the engine (and a networked store) together;
  // any other command still waits until all of them are answered.
  bool overlaps_itself = false;
  // Still run while the server shuts down (END, and ACK/FAIL so a worker can report the job it
  // holds); any other command is answered "shutdown in progress".
  bool allowed_while_stopping = false;
  // Non-null: a Faktory Enterprise command bulkhead does not have, answered with this error.
  const char* enterprise_only = nullptr;
};

// Every command, in the table's order.
std::span<const Command> Commands();
// The command named `verb` (case-sensitive, as Faktory), or nullptr.
const Command* FindCommand(std::string_view verb);

// What the session does with a command line before any handler runs.
enum class Admission {
  kRun,             // run the handler
  kCloseQuietly,    // a first line that is not a HELLO with a JSON object: close, no reply
  kShuttingDown,    // "shutdown in progress"
  kUnknown,         // "unknown command <verb>"
  kEnterpriseOnly,  // command->enterprise_only
};
// `command` is FindCommand(verb) (null: unknown); `args` what follows the verb's space.
Admission Admit(const Command* command, std::string_view args, bool identified, bool stopping);

}  // namespace bulkhead
