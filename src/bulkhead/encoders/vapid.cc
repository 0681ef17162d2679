#include "bulkhead/encoders/vapid.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/pem.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "bulkhead/encoders/openssl_util.h"
#include "bulkhead/encoders/p256.h"
#include "bulkhead/encoders/target_url.h"
#include "bulkhead/util/base64.h"
#include "bulkhead/util/secret_file.h"

namespace bulkhead {
namespace {

using encoders_internal::BioPtr;
using encoders_internal::EvpMdCtxPtr;
using encoders_internal::EvpPkeyPtr;
using encoders_internal::NoPassphrase;
using encoders_internal::OpenSslError;

constexpr char kJwtHeader[] = R"({"typ":"JWT","alg":"ES256"})";

}  // namespace

Result<VapidKey> VapidKey::FromPkey(std::shared_ptr<EVP_PKEY> key) {
  if (!encoders_internal::IsP256Key(key.get())) {
    return Status::InvalidArgument("VAPID key must be an EC key on P-256 (prime256v1)");
  }
  Result<std::string> pub = encoders_internal::P256PublicPoint(key.get());
  if (!pub.ok()) return pub.status();
  VapidKey out;
  out.key_ = std::move(key);
  out.public_key_ = std::move(*pub);
  out.public_key_b64url_ = Base64UrlEncode(out.public_key_);
  return out;
}

Result<VapidKey> VapidKey::Generate() {
  Result<EvpPkeyPtr> key = encoders_internal::GenerateP256Key();
  if (!key.ok()) return key.status();
  return FromPkey(encoders_internal::ShareKey(std::move(*key)));
}

Result<VapidKey> VapidKey::FromPem(std::string_view pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return Status::Internal(OpenSslError("BIO_new_mem_buf"));
  EVP_PKEY* raw = PEM_read_bio_PrivateKey(bio.get(), nullptr, NoPassphrase, nullptr);
  if (raw == nullptr) {
    OpenSslError("");
    return Status::InvalidArgument(
        "VAPID key is not an unencrypted PEM private key (PRIVATE KEY or EC PRIVATE KEY)");
  }
  return FromPkey(encoders_internal::ShareKey(EvpPkeyPtr(raw)));
}

Result<VapidKey> VapidKey::LoadFile(const std::string& path) {
  Result<std::string> pem = ReadSecretFile(path, "VAPID key");
  if (!pem.ok()) return pem.status();
  Result<VapidKey> key = FromPem(*pem);
  OPENSSL_cleanse(pem->data(), pem->size());
  if (!key.ok()) return Status::InvalidArgument(path + ": " + key.status().message());
  return key;
}

Result<VapidKey> VapidKey::FromBase64Url(std::string_view private_key_b64url,
                                         std::string_view public_key_b64url,
                                         const VapidKeyNames& names) {
  const std::string priv(names.private_key);
  const std::string pub(names.public_key);
  Result<std::string> scalar = Base64Decode(private_key_b64url);
  if (!scalar.ok()) {
    return Status::InvalidArgument(priv + " is not base64url (" + scalar.status().message() + ")");
  }
  constexpr size_t kShortest = encoders_internal::kP256ScalarSize - 2;
  if (scalar->size() < kShortest || scalar->size() > encoders_internal::kP256ScalarSize) {
    size_t size = scalar->size();
    OPENSSL_cleanse(scalar->data(), scalar->size());
    return Status::InvalidArgument(priv + " is not a P-256 private key: " + std::to_string(size) +
                                   " bytes, must be 32");
  }
  scalar->insert(0, encoders_internal::kP256ScalarSize - scalar->size(), '\0');
  Result<EvpPkeyPtr> key = encoders_internal::P256KeyFromPrivateScalar(*scalar);
  OPENSSL_cleanse(scalar->data(), scalar->size());
  if (!key.ok()) {
    return Status::InvalidArgument(priv +
                                   " is not a valid P-256 private key (zero, or not below the "
                                   "curve order)");
  }
  Result<VapidKey> out = FromPkey(encoders_internal::ShareKey(std::move(*key)));
  if (!out.ok() || public_key_b64url.empty()) return out;
  Result<std::string> given = Base64Decode(public_key_b64url);
  if (!given.ok()) {
    return Status::InvalidArgument(pub + " is not base64url (" + given.status().message() + ")");
  }
  if (Result<EvpPkeyPtr> point = encoders_internal::P256PublicKeyFromPoint(*given); !point.ok()) {
    return Status::InvalidArgument(pub + " is not a P-256 public key: " + point.status().message());
  }
  if (*given != out->public_key()) {
    return Status::InvalidArgument(pub + " is not the public key of " + priv);
  }
  return out;
}

std::string VapidKey::PublicKeyMastodonForm() const {
  std::string out = public_key_b64url_;
  while (out.size() % 4 != 0) out += '=';
  return out;
}

Status VapidKey::SaveFile(const std::string& path) const {
  BioPtr bio(BIO_new(BIO_s_secmem()));
  if (!bio ||
      PEM_write_bio_PrivateKey(bio.get(), key_.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return Status::Internal(OpenSslError("PEM_write_bio_PrivateKey"));
  }
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    return Status::Unavailable("cannot create " + tmp + ": " + std::strerror(errno));
  }
  auto fail = [&](const char* what) {
    Status st = Status::Unavailable(std::string(what) + " " + tmp + ": " + std::strerror(errno));
    ::close(fd);
    ::unlink(tmp.c_str());
    return st;
  };
  // The umask cannot widen 0600, but make the mode explicit anyway.
  if (::fchmod(fd, 0600) != 0) return fail("cannot chmod");
  for (long off = 0; off < len;) {
    ssize_t n = ::write(fd, data + off, static_cast<size_t>(len - off));
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail("cannot write");
    }
    off += n;
  }
  if (::fsync(fd) != 0) return fail("cannot fsync");
  if (::close(fd) != 0) {
    ::unlink(tmp.c_str());
    return Status::Unavailable("cannot close " + tmp + ": " + std::strerror(errno));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    Status st =
        Status::Unavailable("cannot rename " + tmp + " to " + path + ": " + std::strerror(errno));
    ::unlink(tmp.c_str());
    return st;
  }
  return Status::Ok();
}

Result<std::string> VapidKey::SignEs256(std::string_view data) const {
  EvpMdCtxPtr ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, encoders_internal::Sha256Md(), nullptr,
                                 key_.get()) != 1) {
    return Status::Internal(OpenSslError("ES256 sign init"));
  }
  unsigned char der[80];
  size_t der_len = sizeof(der);
  if (EVP_DigestSign(ctx.get(), der, &der_len, reinterpret_cast<const unsigned char*>(data.data()),
                     data.size()) != 1) {
    return Status::Internal(OpenSslError("ES256 sign"));
  }
  return encoders_internal::EcdsaDerToRaw(
      std::string_view(reinterpret_cast<const char*>(der), der_len));
}

// ---------------------------------------------------------------------------------------------

Result<std::unique_ptr<VapidSigner>> VapidSigner::Create(VapidKey key, std::string subject,
                                                         const Clock& clock,
                                                         VapidSignerOptions options) {
  bool mailto = subject.rfind("mailto:", 0) == 0 && subject.size() > 7 &&
                subject.find('@') != std::string::npos;
  bool https = subject.rfind("https://", 0) == 0 && ParseTargetUrl(subject).ok();
  if (!mailto && !https) {
    return Status::InvalidArgument(
        "VAPID subject must be a mailto: address or an https: URL, got \"" + subject + "\"");
  }
  for (char c : subject) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return Status::InvalidArgument("VAPID subject contains a control character");
    }
  }
  using std::chrono::hours;
  using std::chrono::minutes;
  if (options.token_lifetime < minutes(2) || options.token_lifetime > hours(12)) {
    return Status::InvalidArgument("VAPID token_lifetime must be between 2 minutes and 12 hours");
  }
  if (options.refresh_before < minutes(1) || options.refresh_before >= options.token_lifetime) {
    return Status::InvalidArgument(
        "VAPID refresh_before must be at least 1 minute and less than token_lifetime");
  }
  if (options.max_cached_audiences == 0) options.max_cached_audiences = 1;
  return std::unique_ptr<VapidSigner>(
      new VapidSigner(std::move(key), std::move(subject), clock, options));
}

VapidSigner::VapidSigner(VapidKey key, std::string subject, const Clock& clock,
                         VapidSignerOptions options)
    : key_(std::move(key)),
      subject_(std::move(subject)),
      clock_(clock),
      options_(options),
      header_b64_(Base64UrlEncode(kJwtHeader)) {}

uint64_t VapidSigner::tokens_signed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return tokens_signed_;
}

Result<std::string> VapidSigner::SignToken(const std::string& audience, TimePoint now) {
  int64_t now_s = ToUnixMicros(now) / 1'000'000;
  nlohmann::json claims = {
      {"aud", audience},
      {"exp", now_s + options_.token_lifetime.count()},
      {"sub", subject_},
  };
  std::string signing_input = header_b64_ + "." + Base64UrlEncode(claims.dump());
  Result<std::string> sig = key_.SignEs256(signing_input);
  if (!sig.ok()) return sig.status();
  return signing_input + "." + Base64UrlEncode(*sig);
}

Result<std::string> VapidSigner::Token(std::string_view audience) {
  Result<TargetUrl> url = ParseTargetUrl(audience);
  if (!url.ok()) return Status::InvalidArgument("VAPID audience: " + url.status().message());
  std::string origin = url->Origin();
  if (origin != audience) {
    return Status::InvalidArgument(
        "VAPID audience must be an origin like https://host[:port], "
        "got \"" +
        std::string(audience) + "\"");
  }
  TimePoint now = clock_.Now();
  if (options_.cache) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find(origin);
    if (it != cache_.end() && now < it->second.refresh_at) return it->second.token;
  }
  Result<std::string> token = SignToken(origin, now);
  if (!token.ok()) return token.status();
  std::lock_guard<std::mutex> lock(mu_);
  ++tokens_signed_;
  if (options_.cache) {
    if (cache_.size() >= options_.max_cached_audiences && cache_.find(origin) == cache_.end()) {
      std::erase_if(cache_, [&](const auto& kv) { return kv.second.refresh_at <= now; });
      if (cache_.size() >= options_.max_cached_audiences) cache_.clear();
    }
    // Refresh relative to the whole second the exp claim was computed from.
    TimePoint issued = FromUnixMicros(ToUnixMicros(now) / 1'000'000 * 1'000'000);
    cache_[origin] = Entry{*token, issued + options_.token_lifetime - options_.refresh_before};
  }
  return token;
}

Result<std::string> VapidSigner::AuthorizationHeader(std::string_view audience) {
  Result<std::string> token = Token(audience);
  if (!token.ok()) return token.status();
  return "vapid t=" + *token + ",k=" + key_.public_key_b64url();
}

}  // namespace bulkhead
