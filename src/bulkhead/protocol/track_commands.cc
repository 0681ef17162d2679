#include "bulkhead/protocol/track_commands.h"

#include <string>

#include "bulkhead/engine/engine.h"
#include "bulkhead/protocol/fwp_server.h"
#include "bulkhead/protocol/replies.h"
#include "bulkhead/util/ascii.h"

namespace bulkhead {

void CmdTrack(Session& s, std::string_view args, Responder r) {
  while (!args.empty() && args.front() == ' ') args.remove_prefix(1);
  while (!args.empty() && args.back() == ' ') args.remove_suffix(1);
  size_t space = args.find(' ');
  std::string sub = AsciiUpper(args.substr(0, space));  // case-insensitive, as QUEUE
  std::string_view rest = space == std::string_view::npos ? std::string_view() : args.substr(space);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  if (sub.empty()) {
    r.Error(replies::kTrackNeedsSubcommand);
    return;
  }
  Tracking& tracking = s.server().engine().tracking();
  if (sub == "SET") {
    if (rest.empty()) {
      r.Error(replies::kTrackSetNeedsJson);
      return;
    }
    tracking.Set(rest, s.server().config().max_json_depth, [r](Status st) mutable {
      if (st.ok()) {
        r.Ok();
      } else {
        r.Error(st.message());
      }
    });
  } else if (sub == "GET") {
    if (rest.empty() || rest.find(' ') != std::string_view::npos) {
      r.Error(replies::kTrackGetNeedsJid);
      return;
    }
    tracking.Get(std::string(rest), [r](Result<std::string> out) mutable {
      if (out.ok()) {
        r.Bulk(*out);
      } else {
        r.Error(out.status().message());
      }
    });
  } else {
    r.Error(std::string(replies::kNoSuchTrackSubcommand) + sub + replies::kTrackSubcommands);
  }
}

}  // namespace bulkhead
