#include "bulkhead/relay/client_certificate_file.h"

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/provider.h>
#include <openssl/x509.h>

#include "bulkhead/util/secret_file.h"

namespace bulkhead {
namespace {

constexpr char kConvertHint[] =
    "; if it was exported with legacy ciphers (Keychain Access before macOS 14), convert it: "
    "openssl pkcs12 -legacy -in OLD.p12 -nodes -out both.pem && openssl pkcs12 -export -in "
    "both.pem -out NEW.p12";

std::string BioText(BIO* bio) {
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(n));
}

struct Parsed {
  EVP_PKEY* key = nullptr;
  X509* cert = nullptr;
  STACK_OF(X509) * chain = nullptr;
  ~Parsed() {
    EVP_PKEY_free(key);
    X509_free(cert);
    sk_X509_pop_free(chain, X509_free);
  }
};

bool ParseP12(std::string_view bytes, const std::string& password, Parsed& out) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(bytes.data());
  PKCS12* p12 = d2i_PKCS12(nullptr, &p, static_cast<long>(bytes.size()));
  if (!p12) return false;
  bool ok = PKCS12_parse(p12, password.c_str(), &out.key, &out.cert, &out.chain) == 1;
  PKCS12_free(p12);
  return ok;
}

// OpenSSL 3's legacy provider (RC2, 3DES-era PKCS#12), with the default one kept available.
// Loaded once for the life of the process (kept here, so they stay reachable).
OSSL_PROVIDER* default_provider = nullptr;
OSSL_PROVIDER* legacy_provider = nullptr;

bool LoadLegacyProvider() {
  static const bool loaded = [] {
    default_provider = OSSL_PROVIDER_load(nullptr, "default");
    if (!default_provider) return false;
    legacy_provider = OSSL_PROVIDER_load(nullptr, "legacy");
    return legacy_provider != nullptr;
  }();
  return loaded;
}

Result<std::shared_ptr<const ClientCertificate>> FromP12(std::string_view bytes,
                                                         const std::string& password,
                                                         const std::string& what) {
  Parsed parsed;
  if (!ParseP12(bytes, password, parsed)) {
    ERR_clear_error();
    const bool legacy = LoadLegacyProvider();
    if (!legacy || !ParseP12(bytes, password, parsed)) {
      ERR_clear_error();
      return Status::InvalidArgument(
          "cannot read the PKCS#12 certificate " + what +
          ": a wrong password (certificate_password_file), or not PKCS#12" +
          (legacy ? "" : kConvertHint));
    }
  }
  if (!parsed.key || !parsed.cert) {
    return Status::InvalidArgument("the PKCS#12 file " + what + " holds no certificate and key");
  }
  auto cert = std::make_shared<ClientCertificate>();
  BIO* c = BIO_new(BIO_s_mem());
  BIO* k = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(c, parsed.cert);
  for (int i = 0; parsed.chain && i < sk_X509_num(parsed.chain); ++i) {
    PEM_write_bio_X509(c, sk_X509_value(parsed.chain, i));
  }
  PEM_write_bio_PrivateKey(k, parsed.key, nullptr, nullptr, 0, nullptr, nullptr);
  cert->cert_pem = BioText(c);
  cert->key_pem = BioText(k);
  BIO_free(c);
  BIO_free(k);
  return std::shared_ptr<const ClientCertificate>(std::move(cert));
}

}  // namespace

Result<std::shared_ptr<const ClientCertificate>> ReadClientCertificate(std::string_view bytes,
                                                                       const std::string& password,
                                                                       const std::string& what) {
  if (bytes.find("-----BEGIN") == std::string_view::npos) return FromP12(bytes, password, what);
  if (bytes.find("CERTIFICATE-----") == std::string_view::npos ||
      bytes.find("PRIVATE KEY-----") == std::string_view::npos) {
    return Status::InvalidArgument("the PEM file " + what +
                                   " must hold the certificate and its private key");
  }
  if (bytes.find("ENCRYPTED") != std::string_view::npos) {
    return Status::InvalidArgument("the private key in " + what +
                                   " is encrypted; store it unencrypted (mode 0600) or as .p12");
  }
  auto cert = std::make_shared<ClientCertificate>();
  cert->cert_pem = std::string(bytes);
  cert->key_pem = std::string(bytes);
  return std::shared_ptr<const ClientCertificate>(std::move(cert));
}

Result<std::shared_ptr<const ClientCertificate>> LoadClientCertificate(
    const std::string& path, const std::string& password) {
  auto bytes = ReadSecretFile(path, "APNs certificate");
  if (!bytes.ok()) return bytes.status();
  auto cert = ReadClientCertificate(*bytes, password, path);
  OPENSSL_cleanse(bytes->data(), bytes->size());
  return cert;
}

}  // namespace bulkhead
