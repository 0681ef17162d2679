// JSON from the network, in and out, without exceptions: every text a client sends is parsed
// through ParseJson (bounded nesting, one clear error), and every document that may hold a client's
// bytes is written with DumpJson (never throws on invalid UTF-8).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "bulkhead/util/status.h"

namespace bulkhead {

// The nesting bound used where no setting is at hand (the `max_json_depth` default).
inline constexpr int kDefaultMaxJsonDepth = 64;

// Parses `text` as one JSON document whose arrays and objects nest at most `max_depth` levels
// (a scalar is depth 0, `[]` depth 1). Never throws. InvalidArgument messages:
//   "invalid JSON: parse error at line L, column C: ..." (syntax, invalid UTF-8),
//   "invalid JSON: number overflow parsing '1e400' at byte B",
//   "invalid JSON: nested deeper than N levels (max_json_depth)".
Result<nlohmann::json> ParseJson(std::string_view text, int max_depth);

// Compact JSON text of `doc`; a string holding invalid UTF-8 is written with U+FFFD in place of
// each bad byte sequence instead of throwing. Recursive: call only on documents of bounded depth
// (ParseJson's, or built by the server).
std::string DumpJson(const nlohmann::json& doc);

// Whether `text` holds `needle` anywhere: the screen before parsing a stored payload again for an
// option most jobs lack (a miss needs no parse; a hit may be a value and is then parsed). Through
// memmem: std::string::find starts a comparison at every occurrence of the needle's first byte,
// and a needle starting with '"' meets one every few bytes of JSON.
bool TextContains(std::string_view text, std::string_view needle);

// True when `text` is well-formed UTF-8 (no overlong forms, surrogates or code points past
// U+10FFFF).
bool IsValidUtf8(std::string_view text);

}  // namespace bulkhead
