#include "bulkhead/protocol/resp.h"

namespace bulkhead::resp {

void AppendSimple(std::string& out, std::string_view text) {
  out += '+';
  out += text;
  out += "\r\n";
}

void AppendError(std::string& out, std::string_view message, std::string_view code) {
  out += '-';
  out += code;
  out += ' ';
  for (char c : message) out += (c == '\r' || c == '\n') ? ' ' : c;
  out += "\r\n";
}

void AppendBulk(std::string& out, std::string_view bytes) {
  out += '$';
  out += std::to_string(bytes.size());
  out += "\r\n";
  out += bytes;
  out += "\r\n";
}

void AppendNull(std::string& out) { out += "$-1\r\n"; }

}  // namespace bulkhead::resp
