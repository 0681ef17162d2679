#include "bulkhead/replay/child_process.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

extern char** environ;

namespace bulkhead {
namespace {

// The process groups of own-group children still running, for the signal handler (0: free slot).
constexpr size_t kMaxGroups = 64;
std::atomic<pid_t> g_groups[kMaxGroups];

void KillGroupsAndDie(int sig) {
  for (auto& g : g_groups) {
    pid_t pgid = g.load();
    if (pgid > 0) kill(-pgid, SIGKILL);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

void RegisterGroup(pid_t pgid) {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) signal(sig, KillGroupsAndDie);
  });
  for (auto& g : g_groups) {
    pid_t free_slot = 0;
    if (g.compare_exchange_strong(free_slot, pgid)) return;
  }
}

void UnregisterGroup(pid_t pgid) {
  for (auto& g : g_groups) {
    pid_t mine = pgid;
    if (g.compare_exchange_strong(mine, 0)) return;
  }
}

}  // namespace

Result<std::unique_ptr<ChildProcess>> ChildProcess::Spawn(const std::vector<std::string>& argv,
                                                          const std::string& stderr_path,
                                                          bool pipe_stdout, bool own_group) {
  if (argv.empty()) return Status::InvalidArgument("spawn: empty command");
  int pipe_fds[2] = {-1, -1};
  if (pipe_stdout && pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return Status::Internal(std::string("spawn: pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  if (pipe_stdout) {
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  } else {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  }
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, stderr_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  if (own_group) {
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);  // the child's own pid
  }
  pid_t pid = 0;
  int rc = posix_spawn(&pid, argv[0].c_str(), &actions, &attr, args.data(), environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  if (pipe_stdout) close(pipe_fds[1]);
  if (rc != 0) {
    if (pipe_stdout) close(pipe_fds[0]);
    return Status::Internal("spawn " + argv[0] + ": " + std::strerror(rc));
  }
  if (own_group) RegisterGroup(pid);
  return std::unique_ptr<ChildProcess>(new ChildProcess(pid, pipe_fds[0], stderr_path, own_group));
}

ChildProcess::~ChildProcess() {
  Stop();
  if (stdout_fd_ >= 0) close(stdout_fd_);
}

std::optional<int> ChildProcess::Poll() {
  if (status_) return status_;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) status_ = status;
  return status_;
}

void ChildProcess::Signal(int sig) const { kill(own_group_ ? -pid_ : pid_, sig); }

int ChildProcess::Stop(std::chrono::milliseconds grace) {
  if (Poll()) {
    if (group_open_) {
      kill(-pid_, SIGKILL);  // whatever the leader left behind
      UnregisterGroup(pid_);
      group_open_ = false;
    }
    return *status_;
  }
  Signal(SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < deadline) {
    if (Poll()) return Stop(grace);  // reaped: the branch above ends its group
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  Signal(SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  status_ = status;
  if (group_open_) UnregisterGroup(pid_);
  group_open_ = false;
  return status;
}

std::string ChildProcess::StderrTail(size_t max_bytes) const {
  std::ifstream in(stderr_path_, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  return s.size() > max_bytes ? s.substr(s.size() - max_bytes) : s;
}

Result<std::string> SelfExecutable() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0)
    return Status::Internal(std::string("readlink /proc/self/exe: ") + std::strerror(errno));
  return std::string(buf, static_cast<size_t>(n));
}

Result<std::string> FindOnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  while (!dirs.empty()) {
    size_t colon = dirs.find(':');
    std::string dir(dirs.substr(0, colon));
    dirs = colon == std::string_view::npos ? std::string_view() : dirs.substr(colon + 1);
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return Status::NotFound(name + " is not in PATH (scripts/setup installs it)");
}

Result<uint16_t> FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::Internal("socket() failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    return Status::Unavailable("no free port on 127.0.0.1");
  }
  close(fd);
  return ntohs(addr.sin_port);
}

Status WriteTextFile(const std::filesystem::path& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return Status::Unavailable("cannot write " + path.string());
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = std::fclose(f) == 0 && ok;
  return ok ? Status::Ok() : Status::Unavailable("cannot write " + path.string());
}

}  // namespace bulkhead
