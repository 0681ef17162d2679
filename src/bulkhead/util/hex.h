#pragma once

// Hexadecimal text for bytes (digests, tokens, random ids) and the value of one hex digit.

#include <cstddef>
#include <string>
#include <string_view>

namespace bulkhead {

// Lower-case hex of `size` bytes: two characters per byte, most significant nibble first.
std::string HexLower(const unsigned char* bytes, size_t size);
std::string HexLower(std::string_view bytes);

// 0–15 for '0'–'9', 'a'–'f', 'A'–'F'; -1 for anything else.
int HexDigitValue(char c);

}  // namespace bulkhead
