// Transcript: one conformance file (tests/conformance/*.fwp) parsed into steps, and the matching
// of a reply against an expected line. The format is documented in tests/conformance/README.md.
// Pure functions and values: no sockets, no server (the runner is conformance_test.cc).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "bulkhead/util/clock.h"
#include "bulkhead/util/status.h"

namespace bulkhead::conformance {

struct Step {
  enum class Kind {
    kConnect,     // ! connect [NAME]
    kUse,         // ! use NAME
    kHello,       // ! hello [wid=W] [password=P]
    kClose,       // ! close
    kWaitClosed,  // ! wait-closed
    kElapsed,     // ! elapsed LO..HI   (milliseconds of the server's clock)
    kAdvance,     // ! advance MS       (moves the server's clock)
    kSleep,       // ! sleep MS         (real time)
    kSend,        // > LINE
    kSendRaw,     // >raw TEXT
    kExpect,      // < REPLY
  };
  Kind kind;
  int line = 0;                                // 1-based line in the file
  std::string text;                            // send text / expected reply / connection name
  std::map<std::string, std::string> options;  // ! hello key=value
  int64_t lo = 0, hi = 0;                      // ! elapsed, ! advance, ! sleep
};

struct Transcript {
  std::string path;
  std::vector<std::string> config_lines;  // TOML, from "! config KEY = VALUE"
  std::string store = "memory";           // "! store memory|sqlite"
  std::vector<Step> steps;
};

// InvalidArgument "path:line: why" for a line the format does not know.
Result<Transcript> ParseTranscript(const std::string& path, std::string_view text);

// Captured pattern variables ({name=TYPE} binds, {$name} reads).
using Vars = std::map<std::string, std::string>;

// Expands a `>` line: {repeat N TEXT}, {$name}, {time}, {time+S}, {time-S} (RFC 3339, now ± S
// seconds). Other braces are kept as they are. InvalidArgument for an unbound variable.
Result<std::string> ExpandSend(std::string_view text, const Vars& vars, TimePoint now);

// Decodes >raw escapes: \r \n \t \\ \xHH.
Result<std::string> DecodeEscapes(std::string_view text);

// A reply as one line: "+text", "-text", ":N", "$-1", or "$ " + bulk content.
struct Reply {
  char type = 0;  // '+', '-', ':', '$'; 0: none (closed / timed out)
  bool null = false;
  std::string text;
  std::string Render() const;
};

// Matches `pattern` (literal text with {TYPE}, {name=TYPE} and {$name} placeholders) against the
// whole of `actual`; on success adds the captures to *vars.
bool MatchPattern(std::string_view pattern, std::string_view actual, Vars* vars,
                  std::string* error);

// Compares a reply with an expected `<` line (the text after "< "). On mismatch *why says what
// differs (for $json: the path of the first difference).
bool MatchReply(std::string_view expected, const Reply& actual, Vars* vars, std::string* why);

}  // namespace bulkhead::conformance
