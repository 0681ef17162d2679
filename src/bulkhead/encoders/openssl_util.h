// Small OpenSSL 3 helpers shared by the encoders: owning pointers for OpenSSL objects, error
// text from the OpenSSL error queue, HKDF-SHA256 and SHA-256. Internal to the encoders module.
#pragma once

#include <openssl/evp.h>
#include <openssl/types.h>

#include <memory>
#include <string>
#include <string_view>

#include "bulkhead/util/status.h"

namespace bulkhead {
namespace encoders_internal {

template <auto Fn>
struct OpenSslDeleter {
  template <typename T>
  void operator()(T* p) const {
    Fn(p);
  }
};

using EvpPkeyPtr = std::unique_ptr<EVP_PKEY, OpenSslDeleter<EVP_PKEY_free>>;
using EvpPkeyCtxPtr = std::unique_ptr<EVP_PKEY_CTX, OpenSslDeleter<EVP_PKEY_CTX_free>>;
using EvpMdCtxPtr = std::unique_ptr<EVP_MD_CTX, OpenSslDeleter<EVP_MD_CTX_free>>;
using EvpCipherCtxPtr = std::unique_ptr<EVP_CIPHER_CTX, OpenSslDeleter<EVP_CIPHER_CTX_free>>;
using BioPtr = std::unique_ptr<BIO, OpenSslDeleter<BIO_free_all>>;

// A shared, reference-counted EVP_PKEY (EVP_PKEY_free on the last release).
using SharedPkey = std::shared_ptr<EVP_PKEY>;
inline SharedPkey ShareKey(EvpPkeyPtr key) { return SharedPkey(key.release(), EVP_PKEY_free); }

// "what: <first OpenSSL error reason>"; clears the thread's OpenSSL error queue.
std::string OpenSslError(std::string_view what);

// A pem_password_cb that refuses: bulkhead reads only unencrypted private keys.
int NoPassphrase(char* buf, int size, int rwflag, void* userdata);

// RFC 5869 HKDF with SHA-256: writes `out_len` (≤ 255 * 32) bytes to `out`.
Status HkdfSha256(std::string_view salt, std::string_view ikm, std::string_view info,
                  unsigned char* out, size_t out_len);

// SHA-256 digest (32 raw bytes).
std::string Sha256(std::string_view data);

// Fetched once per process and shared (EVP_*_fetch results are immutable and thread-safe).
const EVP_CIPHER* Aes128Gcm();
const EVP_MD* Sha256Md();

}  // namespace encoders_internal
}  // namespace bulkhead
