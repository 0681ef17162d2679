// Test-only: a throwaway CA and a server certificate it signed (SAN 127.0.0.1, ::1, localhost),
// made in memory with OpenSSL, so TLS tests run with verification on. Header-only; used by
// transport tests and the transport benchmark, never by the library.
#pragma once

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdlib.h>
#include <unistd.h>

#include <stdexcept>
#include <string>

namespace bulkhead::testing {

struct TestCertificates {
  std::string ca_pem;    // trust anchor for clients
  std::string cert_pem;  // server certificate
  std::string key_pem;   // server private key
};

namespace internal {

inline void AddExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) throw std::runtime_error("X509V3_EXT_conf_nid failed");
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

inline X509* MakeCert(EVP_PKEY* key, const char* cn, X509* issuer, EVP_PKEY* issuer_key,
                      long serial, bool is_ca) {
  X509* cert = X509_new();
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert), 7 * 86400);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn),
                             -1, -1, 0);
  X509* signer = issuer != nullptr ? issuer : cert;
  X509_set_issuer_name(cert, X509_get_subject_name(signer));
  AddExtension(cert, signer, NID_subject_key_identifier, "hash");
  if (is_ca) {
    AddExtension(cert, signer, NID_basic_constraints, "critical,CA:TRUE");
    AddExtension(cert, signer, NID_key_usage, "critical,keyCertSign,cRLSign");
  } else {
    AddExtension(cert, signer, NID_authority_key_identifier, "keyid:always");
    AddExtension(cert, signer, NID_basic_constraints, "critical,CA:FALSE");
    AddExtension(cert, signer, NID_key_usage, "critical,digitalSignature");
    AddExtension(cert, signer, NID_ext_key_usage, "serverAuth");
    AddExtension(cert, signer, NID_subject_alt_name, "IP:127.0.0.1,IP:::1,DNS:localhost");
  }
  X509_sign(cert, issuer_key != nullptr ? issuer_key : key, EVP_sha256());
  return cert;
}

inline std::string CertPem(X509* cert) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, cert);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  std::string pem(data, n);
  BIO_free(bio);
  return pem;
}

inline std::string KeyPem(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  std::string pem(data, n);
  BIO_free(bio);
  return pem;
}

}  // namespace internal

// A fresh CA named `ca_name` and a server certificate signed by it.
inline TestCertificates MakeTestCertificates(const std::string& ca_name) {
  EVP_PKEY* ca_key = EVP_EC_gen("P-256");
  EVP_PKEY* key = EVP_EC_gen("P-256");
  if (ca_key == nullptr || key == nullptr) throw std::runtime_error("EVP_EC_gen failed");
  X509* ca = internal::MakeCert(ca_key, ca_name.c_str(), nullptr, nullptr, 1, true);
  X509* cert = internal::MakeCert(key, "localhost", ca, ca_key, 2, false);
  TestCertificates out{internal::CertPem(ca), internal::CertPem(cert), internal::KeyPem(key)};
  X509_free(cert);
  X509_free(ca);
  EVP_PKEY_free(key);
  EVP_PKEY_free(ca_key);
  return out;
}

// Writes `contents` to a new file under $TMPDIR (or /tmp) and deletes it on destruction.
class TempFile {
 public:
  explicit TempFile(const std::string& contents) {
    const char* dir = getenv("TMPDIR");
    path_ = std::string(dir != nullptr ? dir : "/tmp") + "/bulkhead-test-XXXXXX";
    int fd = mkstemp(path_.data());
    if (fd < 0) throw std::runtime_error("mkstemp failed");
    size_t off = 0;
    while (off < contents.size()) {
      ssize_t n = write(fd, contents.data() + off, contents.size() - off);
      if (n <= 0) break;
      off += size_t(n);
    }
    close(fd);
  }
  ~TempFile() { unlink(path_.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace bulkhead::testing
