#include "bulkhead/encoders/http_signature.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "bulkhead/encoders/openssl_util.h"
#include "bulkhead/encoders/target_url.h"
#include "bulkhead/util/ascii.h"
#include "bulkhead/util/base64.h"
#include "bulkhead/util/secret_file.h"

namespace bulkhead {
namespace {

using encoders_internal::BioPtr;
using encoders_internal::EvpMdCtxPtr;
using encoders_internal::EvpPkeyPtr;
using encoders_internal::NoPassphrase;
using encoders_internal::OpenSslError;

constexpr int kMinRsaBits = 2048;

// Extra headers must be real header fields and must not stand in for the ones signed anyway.
Status CheckExtraHeaders(const HeaderList& extra) {
  for (const auto& [name, value] : extra) {
    if (!IsHeaderFieldName(name))
      return Status::InvalidArgument("\"" + name + "\" is not a header name");
    for (const char* own : {"host", "date", "digest", "content-type", "signature"}) {
      if (EqualsIgnoreCase(name, own)) {
        return Status::InvalidArgument(name + " is set by the signer");
      }
    }
    if (!IsHeaderFieldValue(value)) return Status::InvalidArgument(name + " has a control byte");
  }
  return Status::Ok();
}

}  // namespace

Result<SigningKey> SigningKey::FromPem(std::string_view pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return Status::Internal(OpenSslError("BIO_new_mem_buf"));
  EvpPkeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, NoPassphrase, nullptr));
  if (!key) {
    OpenSslError("");
    // Say what was given instead; the messages never quote the input.
    auto has = [&](std::string_view s) { return pem.find(s) != std::string_view::npos; };
    if (has("ENCRYPTED PRIVATE KEY") || has("Proc-Type: 4,ENCRYPTED")) {
      return Status::InvalidArgument(
          "signing key PEM is encrypted: give it without a passphrase "
          "(openssl pkey -in KEY.pem -out PLAIN.pem)");
    }
    if (has("PUBLIC KEY-----") || has("CERTIFICATE-----")) {
      return Status::InvalidArgument(
          "signing key PEM holds a public key or certificate; the private key is needed");
    }
    if (!has("-----BEGIN ")) {
      return Status::InvalidArgument("signing key is not PEM (no \"-----BEGIN\" line)");
    }
    return Status::InvalidArgument("signing key PEM could not be read as a private key");
  }
  if (!EVP_PKEY_is_a(key.get(), "RSA")) {
    const char* type = EVP_PKEY_get0_type_name(key.get());
    return Status::InvalidArgument(
        std::string("signing key must be an RSA key (rsa-sha256), not ") +
        (type ? type : "this key type"));
  }
  if (EVP_PKEY_get_bits(key.get()) < kMinRsaBits) {
    return Status::InvalidArgument("signing key must have at least 2048 bits, has " +
                                   std::to_string(EVP_PKEY_get_bits(key.get())));
  }
  SigningKey out;
  out.key_ = encoders_internal::ShareKey(std::move(key));
  return out;
}

Result<SigningKey> SigningKey::LoadFile(const std::string& path) {
  Result<std::string> pem = ReadSecretFile(path, "signing key");
  if (!pem.ok()) return pem.status();
  Result<SigningKey> key = FromPem(*pem);
  OPENSSL_cleanse(pem->data(), pem->size());
  if (!key.ok()) return Status(key.status().code(), path + ": " + key.status().message());
  return key;
}

Result<SigningKey> SigningKey::Generate(int bits) {
  if (bits < kMinRsaBits) return Status::InvalidArgument("RSA keys need at least 2048 bits");
  EvpPkeyPtr key(EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", static_cast<size_t>(bits)));
  if (!key) return Status::Internal(OpenSslError("RSA key generation"));
  SigningKey out;
  out.key_ = encoders_internal::ShareKey(std::move(key));
  return out;
}

std::string SigningKey::PublicKeyPem() const {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_PUBKEY(bio.get(), key_.get()) != 1) return {};
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(len));
}

int SigningKey::bits() const { return EVP_PKEY_get_bits(key_.get()); }

std::string SigningKey::PublicKeyFingerprint() const {
  unsigned char* der = nullptr;
  int len = i2d_PUBKEY(key_.get(), &der);
  if (len <= 0) return {};
  std::string digest = encoders_internal::Sha256(
      std::string_view(reinterpret_cast<const char*>(der), static_cast<size_t>(len)));
  OPENSSL_free(der);
  std::string b64 = Base64Encode(digest);
  while (!b64.empty() && b64.back() == '=') b64.pop_back();
  return "SHA256:" + b64;
}

Result<std::string> SigningKey::SignRsaSha256(std::string_view data) const {
  EvpMdCtxPtr ctx(EVP_MD_CTX_new());
  EVP_PKEY_CTX* pctx = nullptr;
  if (!ctx ||
      EVP_DigestSignInit(ctx.get(), &pctx, encoders_internal::Sha256Md(), nullptr, key_.get()) !=
          1 ||
      EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PADDING) != 1) {
    return Status::Internal(OpenSslError("rsa-sha256 sign init"));
  }
  size_t len = 0;
  const auto* in = reinterpret_cast<const unsigned char*>(data.data());
  if (EVP_DigestSign(ctx.get(), nullptr, &len, in, data.size()) != 1) {
    return Status::Internal(OpenSslError("rsa-sha256 sign size"));
  }
  std::string sig(len, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len, in,
                     data.size()) != 1) {
    return Status::Internal(OpenSslError("rsa-sha256 sign"));
  }
  sig.resize(len);
  return sig;
}

std::string FormatImfFixdate(TimePoint t) {
  using namespace std::chrono;
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  auto secs = floor<seconds>(t);
  auto day = floor<days>(secs);
  year_month_day ymd(day);
  weekday wd(day);
  hh_mm_ss<seconds> hms(secs - day);
  char buf[40];
  int n =
      std::snprintf(buf, sizeof(buf), "%s, %02u %s %04d %02d:%02d:%02d GMT", kDays[wd.c_encoding()],
                    unsigned(ymd.day()), kMonths[unsigned(ymd.month()) - 1], int(ymd.year()),
                    static_cast<int>(hms.hours().count()), static_cast<int>(hms.minutes().count()),
                    static_cast<int>(hms.seconds().count()));
  return std::string(buf, static_cast<size_t>(n));
}

std::string DigestHeaderValue(std::string_view body) {
  return "SHA-256=" + Base64Encode(encoders_internal::Sha256(body));
}

Result<HeaderList> SignHttpRequest(std::string_view method, std::string_view url,
                                   std::string_view body, std::string_view key_id,
                                   const SigningKey& key, const Clock& clock,
                                   std::string_view content_type, const HeaderList& extra) {
  Result<TargetUrl> target = ParseTargetUrl(url);
  if (!target.ok()) return Status::InvalidArgument("inbox URL: " + target.status().message());
  if (method.empty()) return Status::InvalidArgument("HTTP method is empty");
  for (char c : method) {
    if (!std::isalpha(static_cast<unsigned char>(c))) {
      return Status::InvalidArgument("HTTP method must be letters only");
    }
  }
  if (key_id.empty()) return Status::InvalidArgument("keyId is empty");
  for (char c : key_id) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f || c == '"' || c == '\\') {
      return Status::InvalidArgument("keyId must not contain quotes, backslashes or controls");
    }
  }
  for (char c : content_type) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return Status::InvalidArgument("Content-Type has a control byte");
  }
  if (Status s = CheckExtraHeaders(extra); !s.ok()) return s;

  HeaderList headers;
  headers.reserve(5 + extra.size());
  headers.emplace_back("Host", target->Authority());
  headers.emplace_back("Date", FormatImfFixdate(clock.Now()));
  headers.emplace_back("Digest", DigestHeaderValue(body));
  headers.emplace_back("Content-Type", std::string(content_type));
  std::string signed_names = kDeliverySignedHeaders;
  for (const auto& [name, value] : extra) {
    headers.emplace_back(name, value);
    signed_names += " " + AsciiLower(name);
  }

  std::string signing_string = "(request-target): " + AsciiLower(method) + " " + target->target;
  for (const auto& [name, value] : headers) {
    signing_string += "\n";
    signing_string += AsciiLower(name);
    signing_string += ": ";
    signing_string += value;
  }
  Result<std::string> sig = key.SignRsaSha256(signing_string);
  if (!sig.ok()) return sig.status();
  headers.emplace_back("Signature", "keyId=\"" + std::string(key_id) +
                                        "\",algorithm=\"rsa-sha256\",headers=\"" + signed_names +
                                        "\",signature=\"" + Base64Encode(*sig) + "\"");
  return headers;
}

}  // namespace bulkhead
