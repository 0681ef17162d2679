// The `bulkhead replay` subcommand (and the hidden `replay-worker` it starts as its worker
// process), registered on the CLI11 app by main.cc.
#pragma once

#include <CLI/CLI.hpp>

namespace bulkhead {

// Adds `replay` and `replay-worker` to `app`. When one of them runs (during app.parse), its exit
// code is stored in *exit_code; it stays untouched otherwise.
void RegisterReplayCommands(CLI::App& app, int* exit_code);

}  // namespace bulkhead
