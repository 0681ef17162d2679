// SimdJsonParse: a JSON text parsed by simdjson's DOM parser, the fast path in front of nlohmann's
// (json.h, bounded_sax.h) where a text from the network is parsed often: one SIMD pass validates
// the whole text (its UTF-8 included) and builds a tape the caller reads in place, several times
// faster than nlohmann's lexer reading a byte at a time (PUSHB's parse was the largest cost of a
// pushed job on the event loop).
//
// Never the only path: a text it refuses goes to nlohmann's parser, which gives the verdict and
// ParseJson's error text. It accepts only texts nlohmann accepts (both refuse numbers beyond a
// double's range and lone surrogates), and refuses the valid texts the two would read
// differently: integers beyond 64 bits (nlohmann reads a double), a byte-order mark (nlohmann
// skips it), a NUL byte after the value (where nlohmann stops reading). It refuses nesting deeper
// than `max_depth` (nlohmann's bound: `[]` is depth 1) and some at it (simdjson counts levels
// otherwise), and texts longer than kSimdJsonMaxBytes: the parser (one per thread, reused) keeps
// its buffers for the longest text it has parsed, measured at 5 bytes of RSS per byte of an
// array of jobs and 13 per byte of an array of 1s (13 MB for the longest text it takes).
//
// What a reader must do as nlohmann does: a non-negative integer is nlohmann's number_unsigned,
// a negative one its number_integer (simdjson's INT64 holds both; "-0", a signed zero to
// nlohmann, is then an unsigned zero: the same value).
#pragma once

#include <simdjson.h>

#include <cstddef>
#include <string_view>

namespace bulkhead {

// Texts up to this long take the fast path.
inline constexpr size_t kSimdJsonMaxBytes = size_t{1} << 20;

// Parses `text` into the calling thread's parser and sets `root`, valid until the thread's next
// call; false (and `root` untouched) when refused, as above.
bool SimdJsonParse(std::string_view text, int max_depth, simdjson::dom::element& root);

}  // namespace bulkhead
