#include "bulkhead/client/keys_command.h"

#include <openssl/crypto.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bulkhead/client/api_call.h"
#include "bulkhead/util/percent_encoding.h"

namespace bulkhead {
namespace {

Result<std::string> ReadPem(const std::string& path) {
  if (path == "-") {
    return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot read the PEM file " + path);
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

}  // namespace

std::string KeysApiUrl(const std::string& http_address, const std::string& key_id) {
  std::string url = ApiBaseUrl(http_address) + "/api/keys";
  if (key_id.empty()) return url;
  return url + '/' + PercentEncode(key_id);
}

KeysCommand::KeysCommand(CLI::App& app) {
  keys_ = app.add_subcommand(
      "keys", "Manage the ActivityPub signing keys of a running server (through its HTTP API).");
  keys_->require_subcommand(1);
  keys_->add_option("--http", http_,
                    "the server's HTTP address HOST:PORT, or https://HOST:PORT when it serves TLS "
                    "(default 127.0.0.1:7420)");
  keys_->add_option("--ca", ca_file_,
                    "CA certificate (PEM) to verify an https:// server with "
                    "(default: the system's)");
  keys_->footer("The password, if the server has one, comes from BULKHEAD_PASSWORD.");
  add_ = keys_->add_subcommand("add", "Register (or replace) the RSA private key of KEY_ID.");
  add_->add_option("key_id", key_id_,
                   "the actor's key id, e.g. https://example.com/users/a#main-key")
      ->required();
  add_->add_option("pem_file", pem_file_,
                   "unencrypted PEM RSA private key (>= 2048 bits); - for stdin")
      ->required();
  list_ = keys_->add_subcommand("list", "List the registered keys (public parts only).");
  list_->add_flag("--json", json_, "print the API's JSON (with the public keys)");
  remove_ = keys_->add_subcommand("remove", "Remove the key of KEY_ID.");
  remove_->add_option("key_id", key_id_, "the actor's key id")->required();
  // --http may also follow the subcommand: `bulkhead keys list --http 127.0.0.1:7500`.
  for (CLI::App* sub : {add_, list_, remove_}) {
    sub->add_option("--http", http_, "the server's HTTP address HOST:PORT or https://HOST:PORT");
    sub->add_option("--ca", ca_file_, "CA certificate (PEM) for an https:// server");
  }
}

bool KeysCommand::selected() const { return keys_->parsed(); }

Status KeysCommand::Run(std::ostream& out) {
  if (add_->parsed()) return Add(out);
  if (list_->parsed()) return List(out);
  if (remove_->parsed()) return Remove(out);
  return Status::InvalidArgument("keys: choose add, list or remove");
}

Status KeysCommand::Add(std::ostream& out) {
  Result<std::string> pem = ReadPem(pem_file_);
  if (!pem.ok()) return pem.status();
  Result<ApiResponse> r =
      CallApi("PUT", KeysApiUrl(http_, key_id_), *pem, "application/x-pem-file", ca_file_);
  OPENSSL_cleanse(pem->data(), pem->size());
  if (!r.ok()) return r.status();
  if (r->status != 200 && r->status != 201) return ApiError(*r, "keys add " + key_id_);
  auto doc = nlohmann::json::parse(r->body, nullptr, false);
  if (!doc.is_object()) return Status::Unavailable("keys add: the server's answer is not JSON");
  out << (r->status == 201 ? "added " : "replaced ") << doc.value("key_id", key_id_) << " ("
      << doc.value("algorithm", "rsa-sha256") << ", " << doc.value("bits", 0) << " bits, "
      << doc.value("fingerprint", "") << ")\n"
      << doc.value("public_key_pem", "");
  return Status::Ok();
}

Status KeysCommand::List(std::ostream& out) {
  Result<ApiResponse> r = CallApi("GET", KeysApiUrl(http_, ""), "", "", ca_file_);
  if (!r.ok()) return r.status();
  if (r->status != 200) return ApiError(*r, "keys list");
  auto doc = nlohmann::json::parse(r->body, nullptr, false);
  if (!doc.is_array()) return Status::Unavailable("keys list: the server's answer is not a list");
  if (json_) {
    out << doc.dump(2) << "\n";
    return Status::Ok();
  }
  if (doc.empty()) {
    out << "no signing keys registered\n";
    return Status::Ok();
  }
  for (const auto& key : doc) {
    out << key.value("key_id", "?") << "  " << key.value("algorithm", "?") << "  "
        << key.value("bits", 0) << " bits  " << key.value("fingerprint", "") << "\n";
  }
  return Status::Ok();
}

Status KeysCommand::Remove(std::ostream& out) {
  Result<ApiResponse> r = CallApi("DELETE", KeysApiUrl(http_, key_id_), "", "", ca_file_);
  if (!r.ok()) return r.status();
  if (r->status != 204 && r->status != 200) return ApiError(*r, "keys remove " + key_id_);
  out << "removed " << key_id_ << "\n";
  return Status::Ok();
}

}  // namespace bulkhead
