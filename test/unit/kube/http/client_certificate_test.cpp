// SPDX-License-Identifier: Apache-2.0
#include "kube/http/client_certificate.h"

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/source_dir.h"
#include "support/temp_dir.h"

namespace {

namespace fs = std::filesystem;
using kube::ClientTlsContexts;
using kube::testing::TempDir;

const std::string kPki = kube::testing::source_dir() + "/test/unit/kube/fixtures/pki/";

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Replaces `path` the way rotation tools do: a new file renamed over the old one.
void replace(const std::string& path, const std::string& content) {
  std::ofstream(path + ".new", std::ios::binary) << content;
  fs::rename(path + ".new", path);
}

// The CN of the client certificate `ctx` presents.
std::string presented(const std::shared_ptr<boost::asio::ssl::context>& ctx) {
  X509* cert = SSL_CTX_get0_certificate(ctx->native_handle());
  if (cert == nullptr) return "(none)";
  char cn[256] = {};
  X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof cn);
  return cn;
}

}  // namespace

TEST_CASE("client certificate: rotated files are re-read, a plugin's certificate wins", "[tls]") {
  TempDir dir;
  kube::RestConfig rc;
  rc.host = "127.0.0.1";
  rc.port = "6443";
  rc.source = "test";
  rc.ca_pem = slurp(kPki + "ca.crt");
  rc.client_cert_file = dir.path + "/client.crt";
  rc.client_key_file = dir.path + "/client.key";
  rc.client_cert_pem = slurp(kPki + "client.crt");
  rc.client_key_pem = slurp(kPki + "client.key");
  replace(rc.client_cert_file, rc.client_cert_pem);
  replace(rc.client_key_file, rc.client_key_pem);

  ClientTlsContexts tls(rc);
  bool changed = true;
  const auto first = tls.current(nullptr, changed);
  CHECK_FALSE(changed);
  CHECK(presented(first) == "asop-test-client");
  CHECK(tls.current(nullptr, changed) == first);
  CHECK_FALSE(changed);

  // Rewritten with the same content: nothing changes.
  replace(rc.client_key_file, rc.client_key_pem);
  CHECK(tls.current(nullptr, changed) == first);
  CHECK_FALSE(changed);

  // Half-rotated (new key, old certificate): unusable, the previous pair stays.
  replace(rc.client_key_file, slurp(kPki + "other.key"));
  CHECK(tls.current(nullptr, changed) == first);
  CHECK_FALSE(changed);
  CHECK(tls.current(nullptr, changed) == first);
  // The certificate arrives: new connections present it.
  replace(rc.client_cert_file, slurp(kPki + "other.crt"));
  const auto second = tls.current(nullptr, changed);
  CHECK(changed);
  CHECK(presented(second) == "asop-test-other");
  CHECK(tls.current(nullptr, changed) == second);
  CHECK_FALSE(changed);

  // An exec plugin's certificate wins over the files; a token-only credential does not.
  kube::ExecCredential mtls;
  mtls.client_cert_pem = slurp(kPki + "client.crt");
  mtls.client_key_pem = slurp(kPki + "client.key");
  CHECK(presented(tls.current(&mtls, changed)) == "asop-test-client");
  CHECK(changed);
  CHECK(presented(tls.current(&mtls, changed)) == "asop-test-client");
  CHECK_FALSE(changed);
  kube::ExecCredential token_only;
  token_only.token = "t";
  CHECK(presented(tls.current(&token_only, changed)) == "asop-test-other");
  CHECK(changed);

  // A file that disappears keeps the last good certificate.
  fs::remove(rc.client_cert_file);
  CHECK(presented(tls.current(nullptr, changed)) == "asop-test-other");
  CHECK_FALSE(changed);
}
