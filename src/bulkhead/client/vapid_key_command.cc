#include "bulkhead/client/vapid_key_command.h"

#include <openssl/crypto.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>

#include "bulkhead/config/config.h"
#include "bulkhead/util/secret_file.h"

namespace bulkhead {
namespace {

void PrintPublicKey(const VapidKey& key, bool mastodon_form, std::ostream& out) {
  if (mastodon_form) {
    out << kVapidPublicKeyVariable << "=" << key.PublicKeyMastodonForm() << "\n";
  } else {
    out << key.public_key_b64url() << "\n";
  }
}

// The variables of --env-file, or `environment`.
Result<VapidKeyVariables> ImportedVariables(const std::string& env_file,
                                            const VapidKeyVariables& environment) {
  if (env_file.empty()) return environment;
  Result<std::string> text = ReadSecretFile(env_file, "env");
  if (!text.ok()) return text.status();
  VapidKeyVariables variables = VapidKeyVariablesFromEnvFile(*text, env_file);
  OPENSSL_cleanse(text->data(), text->size());
  return variables;
}

}  // namespace

VapidKeyCommand::VapidKeyCommand(CLI::App& app) {
  command_ = app.add_subcommand(
      "vapid-key",
      "Print the VAPID public key (base64url) the server signs Web Push with, generating the key "
      "file if absent; `vapid-key import` takes Mastodon's VAPID_PRIVATE_KEY/VAPID_PUBLIC_KEY.");
  auto* config =
      command_->add_option("--config", config_file_, "TOML config file")->check(CLI::ExistingFile);
  command_->add_option("--data-dir", data_dir_, "data directory (default ./data)")
      ->excludes(config);
  command_->add_flag("--mastodon", mastodon_form_,
                     "print it as Mastodon's VAPID_PUBLIC_KEY=… line (padded base64url)");
  import_ = command_->add_subcommand(
      "import",
      "Write the key pair of VAPID_PRIVATE_KEY / VAPID_PUBLIC_KEY (Mastodon's form) into the key "
      "file (PEM, mode 0600) and print its public key.");
  import_->fallthrough();  // --config, --data-dir and --mastodon after `import` too
  import_
      ->add_option("--env-file", env_file_,
                   "read the variables from this env file (e.g. Mastodon's .env.production) "
                   "instead of the environment")
      ->check(CLI::ExistingFile);
  import_->add_flag("--force", force_,
                    "replace a key file that holds another key (its subscriptions stop working)");
}

bool VapidKeyCommand::selected() const { return command_->parsed(); }

Status VapidKeyCommand::Run(std::ostream& out, std::ostream& err,
                            const VapidKeyVariables& environment) {
  auto loaded = LoadConfigOrDefaults(config_file_);
  if (!loaded.ok()) return loaded.status();
  Config config = std::move(*loaded);
  if (!data_dir_.empty()) config.data_dir = data_dir_;
  if (import_->parsed()) return Import(config, out, err, environment);
  return Print(config, out, err, environment);
}

Status VapidKeyCommand::Print(const Config& config, std::ostream& out, std::ostream& err,
                              const VapidKeyVariables& environment) {
  Result<ServerVapidKey> key = ResolveVapidKey(config, environment, /*create=*/true);
  if (!key.ok()) return key.status();
  if (key->created) err << "bulkhead: generated " << key->source << "\n";
  if (environment.private_key) err << "bulkhead: the key of " << key->source << "\n";
  if (!key->warning.empty()) err << "bulkhead: " << key->warning << "\n";
  PrintPublicKey(key->key, mastodon_form_, out);
  return Status::Ok();
}

Status VapidKeyCommand::Import(const Config& config, std::ostream& out, std::ostream& err,
                               const VapidKeyVariables& environment) {
  Result<VapidKeyVariables> variables = ImportedVariables(env_file_, environment);
  if (!variables.ok()) return variables.status();
  Result<std::optional<VapidKey>> key = VapidKeyFromVariables(*variables);
  if (!key.ok()) return key.status();
  if (!key->has_value()) {
    return Status::InvalidArgument(std::string(kVapidPrivateKeyVariable) + " is not set in " +
                                   variables->origin);
  }
  const VapidKey& imported = **key;
  const std::string path = VapidKeyPath(config);
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    std::ifstream in(path, std::ios::binary);
    std::string head(64, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<size_t>(in.gcount()));
    if (head.find("-----BEGIN ") == std::string::npos) {
      return Status::FailedPrecondition(
          path +
          " is not a PEM key file; it is left as it is (set vapid_private_key_file to "
          "another path to import into)");
    }
    Result<VapidKey> current = LoadVapidKeyFile(path);
    if (current.ok() && current->public_key() == imported.public_key()) {
      err << "bulkhead: " << path << " already holds this key\n";
      PrintPublicKey(imported, mastodon_form_, out);
      return Status::Ok();
    }
    if (!force_) {
      return Status::FailedPrecondition(
          path + " holds another VAPID key" +
          (current.ok() ? " (public key " + current->public_key_b64url() + ")" : "") +
          "; subscriptions made for it would stop working: --force replaces it");
    }
  }
  if (Status s = SaveVapidKey(imported, path); !s.ok()) return s;
  err << "bulkhead: imported " << kVapidPrivateKeyVariable << " (" << variables->origin << ") into "
      << path << "\n";
  PrintPublicKey(imported, mastodon_form_, out);
  return Status::Ok();
}

}  // namespace bulkhead
