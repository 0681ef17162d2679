#include "bulkhead/encoders/p256.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/param_build.h>

namespace bulkhead {
namespace encoders_internal {
namespace {

constexpr char kGroupName[] = "prime256v1";

using BnPtr = std::unique_ptr<BIGNUM, OpenSslDeleter<BN_clear_free>>;
using EcGroupPtr = std::unique_ptr<EC_GROUP, OpenSslDeleter<EC_GROUP_free>>;
using EcPointPtr = std::unique_ptr<EC_POINT, OpenSslDeleter<EC_POINT_free>>;
using ParamBldPtr = std::unique_ptr<OSSL_PARAM_BLD, OpenSslDeleter<OSSL_PARAM_BLD_free>>;
using ParamsPtr = std::unique_ptr<OSSL_PARAM, OpenSslDeleter<OSSL_PARAM_free>>;
using EcdsaSigPtr = std::unique_ptr<ECDSA_SIG, OpenSslDeleter<ECDSA_SIG_free>>;

// An EC key holding only the P-256 domain parameters; copied into each new public key.
const EVP_PKEY* P256Params() {
  static EVP_PKEY* const params = [] {
    EVP_PKEY* out = nullptr;
    EvpPkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_name(nullptr, "EC", nullptr));
    if (!ctx || EVP_PKEY_paramgen_init(ctx.get()) != 1) return out;
    char group[] = "prime256v1";
    OSSL_PARAM p[] = {OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, group, 0),
                      OSSL_PARAM_construct_end()};
    if (EVP_PKEY_CTX_set_params(ctx.get(), p) != 1) return out;
    EVP_PKEY_paramgen(ctx.get(), &out);
    return out;
  }();
  return params;
}

}  // namespace

bool IsP256Key(const EVP_PKEY* key) {
  if (key == nullptr || !EVP_PKEY_is_a(key, "EC")) return false;
  char name[64];
  size_t len = 0;
  if (EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, name, sizeof(name), &len) !=
      1) {
    return false;
  }
  return std::string_view(name, len) == kGroupName;
}

Result<EvpPkeyPtr> P256PublicKeyFromPoint(std::string_view point) {
  if (point.size() != kP256PointSize) {
    return Status::InvalidArgument("P-256 public key must be 65 bytes, got " +
                                   std::to_string(point.size()));
  }
  if (static_cast<unsigned char>(point[0]) != 0x04) {
    return Status::InvalidArgument("P-256 public key must be an uncompressed point (0x04 ...)");
  }
  const EVP_PKEY* params = P256Params();
  if (params == nullptr) return Status::Internal(OpenSslError("P-256 parameters"));
  EvpPkeyPtr key(EVP_PKEY_new());
  if (!key || EVP_PKEY_copy_parameters(key.get(), const_cast<EVP_PKEY*>(params)) != 1) {
    return Status::Internal(OpenSslError("EVP_PKEY_copy_parameters"));
  }
  // Decoding refuses points that are not on the curve.
  if (EVP_PKEY_set1_encoded_public_key(
          key.get(), reinterpret_cast<const unsigned char*>(point.data()), point.size()) != 1) {
    OpenSslError("");
    return Status::InvalidArgument("P-256 public key is not a point on the curve");
  }
  EvpPkeyCtxPtr check(EVP_PKEY_CTX_new_from_pkey(nullptr, key.get(), nullptr));
  if (!check || EVP_PKEY_public_check_quick(check.get()) != 1) {
    OpenSslError("");
    return Status::InvalidArgument("P-256 public key is not a valid point on the curve");
  }
  return key;
}

Result<EvpPkeyPtr> P256KeyFromPrivateScalar(std::string_view scalar) {
  if (scalar.size() != kP256ScalarSize) {
    return Status::InvalidArgument("P-256 private key must be 32 bytes, got " +
                                   std::to_string(scalar.size()));
  }
  EcGroupPtr group(EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1));
  BnPtr d(BN_bin2bn(reinterpret_cast<const unsigned char*>(scalar.data()),
                    static_cast<int>(scalar.size()), nullptr));
  if (!group || !d) return Status::Internal(OpenSslError("P-256 setup"));
  if (BN_is_zero(d.get()) || BN_cmp(d.get(), EC_GROUP_get0_order(group.get())) >= 0) {
    return Status::InvalidArgument("P-256 private key is out of range");
  }
  EcPointPtr pub(EC_POINT_new(group.get()));
  unsigned char point[kP256PointSize];
  if (!pub || EC_POINT_mul(group.get(), pub.get(), d.get(), nullptr, nullptr, nullptr) != 1 ||
      EC_POINT_point2oct(group.get(), pub.get(), POINT_CONVERSION_UNCOMPRESSED, point,
                         sizeof(point), nullptr) != sizeof(point)) {
    return Status::Internal(OpenSslError("P-256 public point"));
  }
  ParamBldPtr bld(OSSL_PARAM_BLD_new());
  if (!bld ||
      OSSL_PARAM_BLD_push_utf8_string(bld.get(), OSSL_PKEY_PARAM_GROUP_NAME, kGroupName, 0) != 1 ||
      OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_PRIV_KEY, d.get()) != 1 ||
      OSSL_PARAM_BLD_push_octet_string(bld.get(), OSSL_PKEY_PARAM_PUB_KEY, point, sizeof(point)) !=
          1) {
    return Status::Internal(OpenSslError("P-256 key parameters"));
  }
  ParamsPtr params(OSSL_PARAM_BLD_to_param(bld.get()));
  EvpPkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_name(nullptr, "EC", nullptr));
  EVP_PKEY* raw = nullptr;
  if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) != 1 ||
      EVP_PKEY_fromdata(ctx.get(), &raw, EVP_PKEY_KEYPAIR, params.get()) != 1) {
    return Status::Internal(OpenSslError("P-256 key from data"));
  }
  return EvpPkeyPtr(raw);
}

Result<EvpPkeyPtr> GenerateP256Key() {
  const EVP_PKEY* params = P256Params();
  if (params == nullptr) return Status::Internal(OpenSslError("P-256 parameters"));
  EvpPkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, const_cast<EVP_PKEY*>(params), nullptr));
  EVP_PKEY* raw = nullptr;
  if (!ctx || EVP_PKEY_keygen_init(ctx.get()) != 1 || EVP_PKEY_keygen(ctx.get(), &raw) != 1) {
    return Status::Internal(OpenSslError("P-256 key generation"));
  }
  return EvpPkeyPtr(raw);
}

Result<std::string> P256PublicPoint(const EVP_PKEY* key) {
  std::string out(kP256PointSize, '\0');
  size_t len = 0;
  if (EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY,
                                      reinterpret_cast<unsigned char*>(out.data()), out.size(),
                                      &len) != 1 ||
      len != kP256PointSize) {
    return Status::Internal(OpenSslError("P-256 public point export"));
  }
  return out;
}

Result<std::string> P256Ecdh(EVP_PKEY* own, EVP_PKEY* peer) {
  EvpPkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, own, nullptr));
  if (!ctx || EVP_PKEY_derive_init(ctx.get()) != 1 ||
      EVP_PKEY_derive_set_peer_ex(ctx.get(), peer, /*validate_peer=*/0) != 1) {
    return Status::Internal(OpenSslError("ECDH setup"));
  }
  std::string secret(32, '\0');
  size_t len = secret.size();
  if (EVP_PKEY_derive(ctx.get(), reinterpret_cast<unsigned char*>(secret.data()), &len) != 1 ||
      len != 32) {
    return Status::Internal(OpenSslError("ECDH derive"));
  }
  return secret;
}

Result<std::string> EcdsaDerToRaw(std::string_view der) {
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  EcdsaSigPtr sig(d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(der.size())));
  if (!sig) return Status::InvalidArgument(OpenSslError("ECDSA signature is not valid DER"));
  const BIGNUM* r = nullptr;
  const BIGNUM* s = nullptr;
  ECDSA_SIG_get0(sig.get(), &r, &s);
  std::string raw(64, '\0');
  auto* out = reinterpret_cast<unsigned char*>(raw.data());
  if (BN_bn2binpad(r, out, 32) != 32 || BN_bn2binpad(s, out + 32, 32) != 32) {
    return Status::InvalidArgument("ECDSA signature component is longer than 32 bytes");
  }
  return raw;
}

Result<std::string> EcdsaRawToDer(std::string_view raw) {
  if (raw.size() != 64) return Status::InvalidArgument("raw ECDSA signature must be 64 bytes");
  const auto* in = reinterpret_cast<const unsigned char*>(raw.data());
  EcdsaSigPtr sig(ECDSA_SIG_new());
  BIGNUM* r = BN_bin2bn(in, 32, nullptr);
  BIGNUM* s = BN_bin2bn(in + 32, 32, nullptr);
  if (!sig || r == nullptr || s == nullptr || ECDSA_SIG_set0(sig.get(), r, s) != 1) {
    BN_free(r);
    BN_free(s);
    return Status::Internal(OpenSslError("ECDSA_SIG_set0"));
  }
  unsigned char* der = nullptr;
  int len = i2d_ECDSA_SIG(sig.get(), &der);
  if (len <= 0) return Status::Internal(OpenSslError("i2d_ECDSA_SIG"));
  std::string out(reinterpret_cast<char*>(der), static_cast<size_t>(len));
  OPENSSL_free(der);
  return out;
}

}  // namespace encoders_internal
}  // namespace bulkhead
