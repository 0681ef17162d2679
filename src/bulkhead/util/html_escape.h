// HTML escaping: text made safe to place inside an element or a quoted attribute value. Shared by
// every HTML bulkhead writes (the dashboard's pages, the replay's SVG chart). Pure; any thread.
#pragma once

#include <string>
#include <string_view>

namespace bulkhead {

// Text safe inside an element and inside a double- or single-quoted attribute value: & < > " '
// become entities; bytes that are not valid UTF-8 become U+FFFD.
std::string HtmlEscape(std::string_view text);

}  // namespace bulkhead
