// ChildProcess: a program the replay starts (the bulkhead server, the timeline worker), with its
// stdout readable through a pipe and its stderr kept in a file for the failure report.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bulkhead/util/status.h"

namespace bulkhead {

// Not thread-safe; one owner. The destructor stops the process (Stop()).
class ChildProcess {
 public:
  // Starts `argv[0]` (a path) with `argv`. Its stdout is a pipe read with stdout_fd() when
  // `pipe_stdout`, else it inherits /dev/null; its stderr goes to `stderr_path`. With
  // `own_group` the child leads a process group of its own, and Stop() signals the whole group
  // (whatever it started too). Such a group is outside the terminal's, so Ctrl-C does not reach
  // it: the first own-group spawn installs SIGINT, SIGTERM and SIGHUP handlers that SIGKILL every
  // group still running, then let the signal end this process as it would have.
  static Result<std::unique_ptr<ChildProcess>> Spawn(const std::vector<std::string>& argv,
                                                     const std::string& stderr_path,
                                                     bool pipe_stdout, bool own_group = false);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // The read end of the child's stdout (-1 without pipe_stdout). Owned by this object.
  int stdout_fd() const { return stdout_fd_; }
  // The exit status when the process has ended (waitpid status), else nullopt. Does not block.
  std::optional<int> Poll();
  // SIGTERM, then SIGKILL if it has not ended within `grace`. Returns the wait status.
  int Stop(std::chrono::milliseconds grace = std::chrono::seconds(10));
  // The last `max_bytes` of the child's stderr file.
  std::string StderrTail(size_t max_bytes = 2000) const;

 private:
  ChildProcess(pid_t pid, int stdout_fd, std::string stderr_path, bool own_group)
      : pid_(pid),
        stdout_fd_(stdout_fd),
        stderr_path_(std::move(stderr_path)),
        own_group_(own_group) {}
  void Signal(int sig) const;

  pid_t pid_;
  int stdout_fd_;
  std::string stderr_path_;
  bool own_group_;
  bool group_open_ = own_group_;  // own group, not yet ended and unregistered
  std::optional<int> status_;
};

// The path of the running executable (/proc/self/exe), to start its own subcommands.
Result<std::string> SelfExecutable();

// The first executable `name` in $PATH; NotFound names the program.
Result<std::string> FindOnPath(const std::string& name);

// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, then released), for a
// child to listen on.
Result<uint16_t> FreePort();

// Writes `text` to `path` (a child's config file).
Status WriteTextFile(const std::filesystem::path& path, const std::string& text);

}  // namespace bulkhead
