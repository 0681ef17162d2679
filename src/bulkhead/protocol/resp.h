// RESP2 replies as the FWP server writes them. Each function appends one reply to `out`.
#pragma once

#include <string>
#include <string_view>

namespace bulkhead::resp {

// "+text\r\n". `text` must not contain CR or LF.
void AppendSimple(std::string& out, std::string_view text);
// "-ERR message\r\n", or "-CODE message\r\n" with a code; CR/LF in the message become spaces.
void AppendError(std::string& out, std::string_view message, std::string_view code = "ERR");
// "$<len>\r\n<bytes>\r\n".
void AppendBulk(std::string& out, std::string_view bytes);
// "$-1\r\n".
void AppendNull(std::string& out);

}  // namespace bulkhead::resp
