// Every fixed reply text of the FWP server, in one place (docs/protocol.md is the contract).
#pragma once

namespace bulkhead::replies {

inline constexpr char kOk[] = "OK";
inline constexpr char kInvalidPassword[] = "Invalid password";
inline constexpr char kHandshakeTimeout[] = "handshake timeout: HELLO not received within ";
inline constexpr char kLineTooLong[] = "line too long: limit is ";
inline constexpr char kLineTimeout[] = "timed out waiting for the end of the command line";
inline constexpr char kTooManyConnections[] = "too many connections: limit is ";
inline constexpr char kOutOfDescriptors[] =
    "server out of file descriptors: connection refused, try again later";
inline constexpr char kUnsentRepliesTooLarge[] = "unsent replies past the limit of ";
inline constexpr char kLoginThrottled[] = "Invalid password: too many failed logins from ";
inline constexpr char kUnknownCommand[] = "unknown command ";
inline constexpr char kFetchNeedsQueue[] = "must call fetch with at least one queue";
// Faktory's wording first ("invalid ACK <payload>", "missing JID", ...), bulkhead's detail after.
inline constexpr char kInvalidAck[] = "invalid ACK ";  // + the payload (first 200 bytes)
inline constexpr char kAckNeedsJid[] = ": ACK needs a JSON object with a jid string";
inline constexpr char kInvalidFail[] = "invalid FAIL ";  // + the payload (first 200 bytes)
inline constexpr char kFailNeedsObject[] = ": FAIL needs a JSON object";
inline constexpr char kFailMissingJid[] = "missing JID";
inline constexpr char kBeatNeedsWid[] = "BEAT needs a wid";
inline constexpr char kPushbNeedsArray[] = "PUSHB needs a JSON array of jobs";
inline constexpr char kQueueNeedsSubcommand[] =
    "QUEUE needs a subcommand: PAUSE, RESUME, REMOVE or LATENCY";
inline constexpr char kNoSuchQueueSubcommand[] = "no such QUEUE subcommand: ";  // + upper-cased
inline constexpr char kQueueSubcommands[] = " (PAUSE, RESUME, REMOVE or LATENCY)";
inline constexpr char kLatencyWildcard[] = "QUEUE LATENCY does not support wildcards";
inline constexpr char kUnknownMutateOp[] = "unknown mutate operation: ";  // + cmd
inline constexpr char kMutateOps[] = " (clear, kill, discard or requeue)";
inline constexpr char kInvalidMutateTarget[] = "invalid target for mutation command: ";  // + target
inline constexpr char kMutateTargets[] = " (scheduled, retries or dead)";
// BATCH (docs/batches.md). "No such batch <bid>" is Faktory's text, from the store.
inline constexpr char kBatchNeedsSubcommand[] =
    "BATCH needs a subcommand: NEW, OPEN, COMMIT or STATUS";
inline constexpr char kNoSuchBatchSubcommand[] = "no such BATCH subcommand: ";  // + upper-cased
inline constexpr char kBatchSubcommands[] = " (NEW, OPEN, COMMIT or STATUS)";
inline constexpr char kBatchNewNeedsJson[] = "BATCH NEW needs a JSON object";
// TRACK (docs/tracking.md).
inline constexpr char kTrackNeedsSubcommand[] = "TRACK needs a subcommand: SET or GET";
inline constexpr char kNoSuchTrackSubcommand[] = "no such TRACK subcommand: ";  // + upper-cased
inline constexpr char kTrackSubcommands[] = " (SET or GET)";
inline constexpr char kTrackSetNeedsJson[] = "TRACK SET needs a JSON object";
inline constexpr char kTrackGetNeedsJid[] = "TRACK GET needs one jid";
inline constexpr char kShutdown[] = "shutdown in progress";
inline constexpr char kHelloBadVersion[] =
    "invalid HELLO: v must be an integer (the protocol version, 2)";
inline constexpr char kHelloAgain[] = "HELLO was already received on this connection";

}  // namespace bulkhead::replies
