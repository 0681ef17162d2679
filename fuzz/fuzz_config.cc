// Fuzz target: the TOML configuration file (src/bulkhead/config/config.h) and what `bulkhead serve`
// derives from it before opening anything: Validate, the listen addresses, the delivery defaults
// and dispatcher settings, the [statsd] flavor and tags.
// Input: the file's bytes. LoadConfigFile reads a path, so the bytes go to a memfd read through
// /proc/self/fd/N (no file on disk).
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bulkhead/config/config.h"
#include "bulkhead/dispatch/dispatcher.h"
#include "bulkhead/metrics/statsd_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  int fd = ::memfd_create("fuzz_config.toml", MFD_CLOEXEC);
  if (fd < 0) {
    std::perror("memfd_create");
    std::abort();
  }
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::write(fd, data + done, size - done);
    if (n <= 0) {
      std::perror("write");
      std::abort();
    }
    done += static_cast<size_t>(n);
  }
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  bulkhead::Result<bulkhead::Config> config = bulkhead::LoadConfigFile(path);
  ::close(fd);
  if (!config.ok()) {
    if (config.status().message().empty()) {
      std::fprintf(stderr, "fuzz_config: a refusal without a message\n");
      std::abort();
    }
    return 0;
  }
  bulkhead::Config& c = *config;
  (void)c.StoreUrl();
  for (const auto& [name, jt] : c.jobtypes) (void)c.RetryFor(name);
  (void)bulkhead::ParseHostPort(c.listen);
  (void)bulkhead::ParseHostPort(c.http);
  for (const auto& tag : c.statsd.tags) (void)bulkhead::ParseStatsdTag(tag);
  (void)bulkhead::ParseStatsdFlavor(c.statsd.flavor);
  if (!c.Validate().ok()) return 0;
  // What Server::Start does with a valid configuration before it opens the store.
  if (!bulkhead::ParseHostPort(c.listen).ok() || !bulkhead::ParseHostPort(c.http).ok()) {
    std::fprintf(stderr,
                 "fuzz_config: Validate accepted a listen/http address ParseHostPort refuses\n");
    std::abort();
  }
  bulkhead::ApplyDeliveryDefaults(c);
  bulkhead::DispatcherConfig dc = bulkhead::MakeDispatcherConfig(c);
  (void)dc;
  return 0;
}
