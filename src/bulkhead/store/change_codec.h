// Change codec: Changes as compact binary, for the `sqlite:` store's redo log (redo_log.h). Each
// change is its kind (one byte), its row id and the fields its kind uses (change.h), integers
// little-endian at fixed width, strings as a 32-bit length and their bytes. A reader accepts
// exactly what EncodeChanges writes (several encodings back to back read as one list): a decode
// that runs out of bytes or meets an unknown kind or state fails with an error naming what it met
// and where, and never reads past its input.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bulkhead/store/change.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

// Appends `changes` to `out` (a count, then each change).
void EncodeChanges(const std::vector<Change>& changes, std::string& out);

// The changes of every encoding in `in`, in order; InvalidArgument naming the damage.
Result<std::vector<Change>> DecodeChanges(std::string_view in);

}  // namespace bulkhead
