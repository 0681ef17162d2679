#include "bulkhead/util/rng.h"

#include <openssl/rand.h>

#include <stdexcept>

#include "bulkhead/util/hex.h"

namespace bulkhead {

DefaultRng::DefaultRng() {
  std::random_device rd;
  engine_.seed((static_cast<uint64_t>(rd()) << 32) ^ rd());
}

uint64_t DefaultRng::Uniform(uint64_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  return std::uniform_int_distribution<uint64_t>(0, n - 1)(engine_);
}

uint64_t DefaultRng::Next64() {
  std::lock_guard<std::mutex> lock(mu_);
  return engine_();
}

uint64_t ScriptedRng::Uniform(uint64_t n) { return Next64() % n; }

uint64_t ScriptedRng::Next64() {
  if (values_.empty()) return 0;
  uint64_t v = values_.front();
  values_.pop_front();
  return v;
}

std::string RandomBytes(size_t bytes) {
  std::string raw(bytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(bytes)) != 1) {
    // RAND_bytes fails only when the OS entropy source is broken: nothing sensible can continue.
    throw std::runtime_error("OpenSSL RAND_bytes failed");
  }
  return raw;
}

std::string RandomHex(size_t bytes) { return HexLower(RandomBytes(bytes)); }

}  // namespace bulkhead
