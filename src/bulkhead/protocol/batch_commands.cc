#include "bulkhead/protocol/batch_commands.h"

#include <string>

#include "bulkhead/engine/engine.h"
#include "bulkhead/protocol/fwp_server.h"
#include "bulkhead/protocol/replies.h"
#include "bulkhead/util/ascii.h"

namespace bulkhead {
namespace {

// "WORD rest" -> {"WORD", "rest"} (rest without its leading spaces).
std::pair<std::string_view, std::string_view> FirstWord(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  size_t space = s.find(' ');
  if (space == std::string_view::npos) return {s, {}};
  std::string_view rest = s.substr(space + 1);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  while (!rest.empty() && rest.back() == ' ') rest.remove_suffix(1);
  return {s.substr(0, space), rest};
}

}  // namespace

void CmdBatch(Session& s, std::string_view args, Responder r) {
  auto [word, rest] = FirstWord(args);
  if (word.empty()) {
    r.Error(replies::kBatchNeedsSubcommand);
    return;
  }
  std::string sub = AsciiUpper(word);  // case-insensitive, as QUEUE
  Batches& batches = s.server().engine().batches();
  auto text_reply = [r](Result<std::string> out) mutable {
    if (out.ok()) {
      r.Bulk(*out);
    } else {
      r.Error(out.status().message());
    }
  };
  if (sub == "NEW") {
    if (rest.empty()) {
      r.Error(replies::kBatchNewNeedsJson);
      return;
    }
    batches.New(rest, s.server().config().max_json_depth, text_reply);
    return;
  }
  if (sub != "OPEN" && sub != "COMMIT" && sub != "STATUS") {
    r.Error(std::string(replies::kNoSuchBatchSubcommand) + sub + replies::kBatchSubcommands);
    return;
  }
  if (rest.empty() || rest.find(' ') != std::string_view::npos) {
    r.Error("BATCH " + sub + " needs one bid");
    return;
  }
  std::string bid(rest);
  if (sub == "OPEN") {
    batches.Open(bid, text_reply);
  } else if (sub == "STATUS") {
    batches.GetStatus(bid, text_reply);
  } else {
    batches.Commit(bid, [r](Status st) mutable {
      if (st.ok()) {
        r.Ok();
      } else {
        r.Error(st.message());
      }
    });
  }
}

}  // namespace bulkhead
