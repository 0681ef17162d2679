// Test-only: runs the node scripts in tests/tools/ (npm reference implementations) from gtests.
// The repository root comes from BULKHEAD_SOURCE_DIR, which ctest sets.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

namespace bulkhead {
namespace testing_node {

// The repository root, or nullopt when BULKHEAD_SOURCE_DIR is unset or tests/node_modules is
// missing (then the interop tests skip).
inline std::optional<std::string> SourceDir() {
  const char* dir = std::getenv("BULKHEAD_SOURCE_DIR");
  if (dir == nullptr || *dir == '\0') return std::nullopt;
  std::string root(dir);
  if (::access((root + "/tests/node_modules").c_str(), R_OK) != 0) return std::nullopt;
  if (std::system("node --version >/dev/null 2>&1") != 0) return std::nullopt;
  return root;
}

struct NodeRun {
  int exit_code = -1;
  std::string out;  // stdout; stderr goes to the test log
};

// Writes `input` to a temp file and runs `node <root>/tests/tools/<script> <file>`.
inline NodeRun RunNodeTool(const std::string& root, const std::string& script,
                           const std::string& input) {
  std::string path =
      "/tmp/bulkhead_encoders_" + std::to_string(::getpid()) + "_" + script + ".json";
  {
    std::ofstream f(path, std::ios::binary);
    f << input;
  }
  std::string cmd = "node '" + root + "/tests/tools/" + script + "' '" + path + "'";
  NodeRun run;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return run;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) run.out.append(buf, n);
  int status = ::pclose(p);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::remove(path.c_str());
  return run;
}

}  // namespace testing_node
}  // namespace bulkhead
