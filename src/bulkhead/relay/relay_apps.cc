#include "bulkhead/relay/relay_apps.h"

#include <openssl/crypto.h>

#include "bulkhead/relay/client_certificate_file.h"
#include "bulkhead/util/secret_file.h"

namespace bulkhead {
namespace {

Status InApp(const std::string& kind, const std::string& name, const Status& s) {
  return Status(s.code(), "relay." + kind + " " + name + ": " + std::string(s.message()));
}

Status LoadApnsCredentials(ApnsApp& app, const Clock& clock) {
  const RelayApnsApp& c = app.config;
  if (!c.key_file.empty()) {
    auto key = VapidKey::LoadFile(c.key_file);
    if (!key.ok()) {
      return Status::InvalidArgument(
          "key_file " + c.key_file +
          " is not an APNs .p8 key (PKCS#8, P-256): " + std::string(key.status().message()));
    }
    auto token = ApnsToken::Create(std::move(*key), c.key_id, c.team_id, clock);
    if (!token.ok()) return token.status();
    app.token.emplace(std::move(*token));
    return Status::Ok();
  }
  std::string password;
  if (!c.certificate_password_file.empty()) {
    auto text = ReadSecretFile(c.certificate_password_file, "certificate password");
    if (!text.ok()) return text.status();
    password = *text;
    while (!password.empty() && (password.back() == '\n' || password.back() == '\r')) {
      password.pop_back();
    }
    OPENSSL_cleanse(text->data(), text->size());
  }
  auto cert = LoadClientCertificate(c.certificate_file, password);
  OPENSSL_cleanse(password.data(), password.size());
  if (!cert.ok()) return cert.status();
  app.certificate = std::move(*cert);
  return Status::Ok();
}

Status LoadFcmCredentials(FcmApp& app, Transport& transport, const Clock& clock) {
  auto text = ReadSecretFile(app.config.service_account_file, "service account");
  if (!text.ok()) return text.status();
  auto account = ParseServiceAccount(*text);
  OPENSSL_cleanse(text->data(), text->size());
  if (!account.ok()) {
    return Status::InvalidArgument(app.config.service_account_file + ": " +
                                   std::string(account.status().message()));
  }
  app.project = app.config.project.empty() ? account->project_id : app.config.project;
  if (app.project.empty()) {
    return Status::InvalidArgument(
        "no project: the service account has no project_id; set "
        "project");
  }
  app.access =
      std::make_unique<FcmAccessToken>(std::move(*account), app.config.token_url, transport, clock);
  return Status::Ok();
}

template <typename App>
App* Find(std::vector<std::unique_ptr<App>>& apps, const std::string& name) {
  if (apps.empty()) return nullptr;
  if (name.empty()) {
    for (auto& a : apps) {
      if (a->config.is_default) return a.get();
    }
    return apps.front().get();
  }
  for (auto& a : apps) {
    if (a->config.name == name) return a.get();
  }
  return nullptr;
}

}  // namespace

Result<std::unique_ptr<RelayApps>> RelayApps::Load(const RelaySettings& settings,
                                                   Transport& transport, const Clock& clock,
                                                   RelayCounters& counters) {
  auto apps = std::make_unique<RelayApps>();
  for (const RelayApnsApp& c : settings.apns) {
    auto app = std::make_unique<ApnsApp>(c, counters.App(c.name, "apns", c.topic));
    if (Status s = LoadApnsCredentials(*app, clock); !s.ok()) return InApp("apns", c.name, s);
    apps->apns_.push_back(std::move(app));
  }
  for (const RelayFcmApp& c : settings.fcm) {
    auto app = std::make_unique<FcmApp>(c, counters.App(c.name, "fcm", c.project));
    if (Status s = LoadFcmCredentials(*app, transport, clock); !s.ok()) {
      return InApp("fcm", c.name, s);
    }
    app->figures.target = app->project;
    apps->fcm_.push_back(std::move(app));
  }
  return apps;
}

ApnsApp* RelayApps::Apns(const std::string& name) { return Find(apns_, name); }
FcmApp* RelayApps::Fcm(const std::string& name) { return Find(fcm_, name); }

}  // namespace bulkhead
