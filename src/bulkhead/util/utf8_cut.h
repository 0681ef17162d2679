// Shortening text for a table cell without splitting a UTF-8 sequence. Shared by the dashboard's
// truncated columns and `bulkhead stats`. Pure; any thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace bulkhead {

// `text` when it has at most `max_bytes` bytes; otherwise its longest prefix of at most
// `max_bytes` bytes that does not end inside a UTF-8 sequence, followed by "…".
std::string CutUtf8(std::string_view text, size_t max_bytes);

}  // namespace bulkhead
