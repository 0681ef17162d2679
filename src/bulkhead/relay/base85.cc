#include "bulkhead/relay/base85.h"

#include <array>
#include <cstdint>

namespace bulkhead {
namespace {

const std::array<int8_t, 256>& DigitValues() {
  static const std::array<int8_t, 256> values = [] {
    std::array<int8_t, 256> v;
    v.fill(-1);
    for (int i = 0; i < 85; ++i) v[static_cast<unsigned char>(kRelayBase85Alphabet[i])] = i;
    return v;
  }();
  return values;
}

// Writes `value` as `digits` base-85 digits, most significant first.
void PutDigits(uint64_t value, size_t digits, std::string& out) {
  char buf[5];
  for (size_t i = digits; i-- > 0;) {
    buf[i] = kRelayBase85Alphabet[value % 85];
    value /= 85;
  }
  out.append(buf, digits);
}

}  // namespace

size_t Base85Length(size_t bytes) {
  size_t tail = bytes % 4;
  return bytes / 4 * 5 + (tail ? tail + 1 : 0);
}

std::string Base85Encode(std::string_view bytes) {
  std::string out;
  out.reserve(Base85Length(bytes.size()));
  size_t i = 0;
  for (; i + 4 <= bytes.size(); i += 4) {
    uint64_t v = 0;
    for (size_t j = 0; j < 4; ++j) v = v << 8 | static_cast<unsigned char>(bytes[i + j]);
    PutDigits(v, 5, out);
  }
  if (size_t tail = bytes.size() - i; tail > 0) {
    uint64_t v = 0;
    for (size_t j = 0; j < tail; ++j) v = v << 8 | static_cast<unsigned char>(bytes[i + j]);
    PutDigits(v, tail + 1, out);
  }
  return out;
}

Result<std::string> Base85Decode(std::string_view text) {
  if (text.size() % 5 == 1) {
    return Status::InvalidArgument("base85: " + std::to_string(text.size()) +
                                   " characters is no encoded length");
  }
  const auto& values = DigitValues();
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    size_t digits = std::min<size_t>(5, text.size() - i);
    size_t bytes = digits == 5 ? 4 : digits - 1;
    uint64_t v = 0;
    for (size_t j = 0; j < digits; ++j) {
      int8_t d = values[static_cast<unsigned char>(text[i + j])];
      if (d < 0) {
        return Status::InvalidArgument("base85: character " + std::to_string(i + j) +
                                       " is not in the alphabet");
      }
      v = v * 85 + static_cast<uint64_t>(d);
    }
    if (v >> (8 * bytes) != 0) return Status::InvalidArgument("base85: a group overflows");
    for (size_t j = bytes; j-- > 0;) out.push_back(static_cast<char>(v >> (8 * j) & 0xff));
    i += digits;
  }
  return out;
}

}  // namespace bulkhead
