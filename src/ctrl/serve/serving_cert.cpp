// SPDX-License-Identifier: Apache-2.0
#include "ctrl/serve/serving_cert.h"

#include <glog/logging.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <stdexcept>
#include <system_error>

namespace ctrl {
namespace ssl = boost::asio::ssl;

namespace {

template <class T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
using PKey = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using Cert = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using Ext = std::unique_ptr<X509_EXTENSION, Deleter<X509_EXTENSION, X509_EXTENSION_free>>;

std::shared_ptr<ssl::context> server_context() {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                   ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                   ssl::context::single_dh_use);
  return ctx;
}

void add_extension(X509* cert, int nid, const char* value) {
  X509V3_CTX v3;
  X509V3_set_ctx_nodb(&v3);
  X509V3_set_ctx(&v3, cert, cert, nullptr, nullptr, 0);
  Ext ext(X509V3_EXT_conf_nid(nullptr, &v3, nid, value));
  if (!ext || X509_add_ext(cert, ext.get(), -1) != 1) {
    throw std::runtime_error("self-signed certificate: cannot add an extension");
  }
}

}  // namespace

std::shared_ptr<ssl::context> self_signed_context(const std::string& common_name) {
  PKey key(EVP_EC_gen("P-256"));
  if (!key) throw std::runtime_error("self-signed certificate: cannot generate a P-256 key");
  Cert cert(X509_new());
  if (!cert) throw std::runtime_error("self-signed certificate: out of memory");
  X509_set_version(cert.get(), 2);
  // A random serial: a client that cached an earlier run's certificate sees a new one.
  unsigned char serial[16];
  if (RAND_bytes(serial, sizeof serial) != 1) throw std::runtime_error("RAND_bytes failed");
  serial[0] &= 0x7f;
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -60 * 60);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 365L * 24 * 60 * 60);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1,
                             0);
  X509_set_issuer_name(cert.get(), name);
  add_extension(cert.get(), NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1,IP:::1");
  add_extension(cert.get(), NID_basic_constraints, "critical,CA:FALSE");
  add_extension(cert.get(), NID_key_usage, "critical,digitalSignature");
  add_extension(cert.get(), NID_ext_key_usage, "serverAuth");
  if (X509_set_pubkey(cert.get(), key.get()) != 1 ||
      X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) {
    throw std::runtime_error("self-signed certificate: cannot sign");
  }
  auto ctx = server_context();
  if (SSL_CTX_use_certificate(ctx->native_handle(), cert.get()) != 1 ||
      SSL_CTX_use_PrivateKey(ctx->native_handle(), key.get()) != 1) {
    throw std::runtime_error("self-signed certificate: cannot use it");
  }
  return ctx;
}

ServingCertificate::ServingCertificate(Options options, const Clock& clock)
    : options_(std::move(options)), clock_(clock) {
  if (options_.cert_dir.empty()) {
    context_ = self_signed_context("appservice-operator");
    LOG(INFO) << "serving metrics with a self-signed certificate made at start";
    return;
  }
  loaded_change_ = newest_change();
  context_ = load_files();
  ++loads_;
  next_check_ = clock_.now() + options_.recheck_interval;
  LOG(INFO) << "serving metrics with the certificate in " << options_.cert_dir;
}

std::filesystem::file_time_type ServingCertificate::newest_change() const {
  const std::filesystem::path dir(options_.cert_dir);
  std::error_code ec;
  auto a = std::filesystem::last_write_time(dir / options_.cert_name, ec);
  if (ec) return {};
  auto b = std::filesystem::last_write_time(dir / options_.key_name, ec);
  if (ec) return {};
  return std::max(a, b);
}

std::shared_ptr<ssl::context> ServingCertificate::load_files() const {
  const std::filesystem::path dir(options_.cert_dir);
  const auto cert = (dir / options_.cert_name).string();
  const auto key = (dir / options_.key_name).string();
  auto ctx = server_context();
  boost::system::error_code ec;
  ctx->use_certificate_chain_file(cert, ec);
  if (ec) throw std::runtime_error("metrics certificate " + cert + ": " + ec.message());
  ctx->use_private_key_file(key, ssl::context::pem, ec);
  if (ec) throw std::runtime_error("metrics key " + key + ": " + ec.message());
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
    throw std::runtime_error("metrics key " + key + " does not match certificate " + cert);
  }
  return ctx;
}

std::shared_ptr<ssl::context> ServingCertificate::context() {
  if (options_.cert_dir.empty() || clock_.now() < next_check_) return context_;
  next_check_ = clock_.now() + options_.recheck_interval;
  const auto change = newest_change();
  if (change == loaded_change_) return context_;
  try {
    context_ = load_files();
    loaded_change_ = change;
    ++loads_;
    LOG(INFO) << "reloaded the metrics certificate from " << options_.cert_dir;
  } catch (const std::exception& e) {
    // Mid-rotation (one file new, one old) or a bad file: keep serving the last good one.
    LOG(WARNING) << "keeping the previous metrics certificate: " << e.what();
  }
  return context_;
}

}  // namespace ctrl
