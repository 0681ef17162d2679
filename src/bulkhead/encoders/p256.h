// P-256 (prime256v1 / secp256r1) key helpers for Web Push and VAPID: building EVP_PKEYs from the
// raw forms those protocols write (65-byte uncompressed points, 32-byte private scalars),
// generating keys, ECDH, and converting ECDSA signatures between DER and JOSE's raw R‖S.
// Internal to the encoders module. All functions are thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "bulkhead/encoders/openssl_util.h"
#include "bulkhead/util/status.h"

namespace bulkhead {
namespace encoders_internal {

inline constexpr size_t kP256PointSize = 65;  // 0x04 ‖ X(32) ‖ Y(32)
inline constexpr size_t kP256ScalarSize = 32;

// A public key from an uncompressed point. InvalidArgument unless `point` is 65 bytes, starts
// with 0x04 and lies on P-256 (and is not the point at infinity).
Result<EvpPkeyPtr> P256PublicKeyFromPoint(std::string_view point);

// A key pair from a raw big-endian private scalar (32 bytes, 0 < d < n); the public point is
// computed. InvalidArgument when the scalar is out of range.
Result<EvpPkeyPtr> P256KeyFromPrivateScalar(std::string_view scalar);

// A fresh random key pair.
Result<EvpPkeyPtr> GenerateP256Key();

// The uncompressed public point (65 bytes) of a P-256 key.
Result<std::string> P256PublicPoint(const EVP_PKEY* key);

// True when `key` is an EC key on P-256.
bool IsP256Key(const EVP_PKEY* key);

// ECDH shared secret (the 32-byte X coordinate). `peer` must already be validated.
Result<std::string> P256Ecdh(EVP_PKEY* own, EVP_PKEY* peer);

// DER ECDSA-Sig-Value → 64-byte R‖S (each left-padded to 32 bytes), and back.
Result<std::string> EcdsaDerToRaw(std::string_view der);
Result<std::string> EcdsaRawToDer(std::string_view raw);

}  // namespace encoders_internal
}  // namespace bulkhead
