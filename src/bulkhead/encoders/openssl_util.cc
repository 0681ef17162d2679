#include "bulkhead/encoders/openssl_util.h"

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

namespace bulkhead {
namespace encoders_internal {
namespace {

EVP_KDF* HkdfKdf() {
  static EVP_KDF* const kdf = EVP_KDF_fetch(nullptr, "HKDF", nullptr);
  return kdf;
}

}  // namespace

int NoPassphrase(char*, int, int, void*) { return -1; }

std::string OpenSslError(std::string_view what) {
  std::string out(what);
  unsigned long err = ERR_get_error();
  if (err != 0) {
    char buf[256];
    ERR_error_string_n(err, buf, sizeof(buf));
    out += ": ";
    out += buf;
  }
  ERR_clear_error();
  return out;
}

const EVP_CIPHER* Aes128Gcm() {
  static EVP_CIPHER* const cipher = EVP_CIPHER_fetch(nullptr, "AES-128-GCM", nullptr);
  return cipher;
}

const EVP_MD* Sha256Md() {
  static EVP_MD* const md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  return md;
}

Status HkdfSha256(std::string_view salt, std::string_view ikm, std::string_view info,
                  unsigned char* out, size_t out_len) {
  EVP_KDF* kdf = HkdfKdf();
  if (kdf == nullptr) return Status::Internal(OpenSslError("HKDF is not available"));
  std::unique_ptr<EVP_KDF_CTX, OpenSslDeleter<EVP_KDF_CTX_free>> ctx(EVP_KDF_CTX_new(kdf));
  if (!ctx) return Status::Internal(OpenSslError("EVP_KDF_CTX_new"));
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, const_cast<char*>(salt.data()),
                                        salt.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, const_cast<char*>(ikm.data()),
                                        ikm.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, const_cast<char*>(info.data()),
                                        info.size()),
      OSSL_PARAM_construct_end(),
  };
  if (EVP_KDF_derive(ctx.get(), out, out_len, params) != 1) {
    return Status::Internal(OpenSslError("HKDF derive"));
  }
  return Status::Ok();
}

std::string Sha256(std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), md, &len, Sha256Md(), nullptr);
  return std::string(reinterpret_cast<char*>(md), len);
}

}  // namespace encoders_internal
}  // namespace bulkhead
