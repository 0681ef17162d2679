// Rng: the one source of chance for decisions (retry jitter, salts, breaker jitter). Tests inject
// a ScriptedRng so that every random choice is known in advance.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <random>
#include <string>

namespace bulkhead {

class Rng {
 public:
  virtual ~Rng() = default;
  // A uniformly distributed integer in [0, n). n must be > 0.
  virtual uint64_t Uniform(uint64_t n) = 0;
  // A uniformly distributed 64-bit value.
  virtual uint64_t Next64() = 0;
};

// Seeded from std::random_device. Thread-safe (internally locked).
class DefaultRng final : public Rng {
 public:
  DefaultRng();
  explicit DefaultRng(uint64_t seed) : engine_(seed) {}
  uint64_t Uniform(uint64_t n) override;
  uint64_t Next64() override;

 private:
  std::mutex mu_;
  std::mt19937_64 engine_;
};

// Returns queued values in order (each reduced modulo n for Uniform); when empty, returns 0.
// Not thread-safe; for tests.
class ScriptedRng final : public Rng {
 public:
  ScriptedRng() = default;
  explicit ScriptedRng(std::initializer_list<uint64_t> values) : values_(values) {}
  void Push(uint64_t v) { values_.push_back(v); }
  uint64_t Uniform(uint64_t n) override;
  uint64_t Next64() override;

 private:
  std::deque<uint64_t> values_;
};

// `bytes` cryptographically strong random bytes (OpenSSL RAND_bytes).
std::string RandomBytes(size_t bytes);
// RandomBytes(bytes) as lowercase hex.
std::string RandomHex(size_t bytes);

}  // namespace bulkhead
