// SPDX-License-Identifier: Apache-2.0
#include "kube/http/tls_context.h"

#include <openssl/x509v3.h>

#include <catch2/catch.hpp>
#include <memory>

#include "kube/config/config_error.h"

namespace {

kube::RestConfig https_config(const std::string& host, const std::string& tls_server_name) {
  kube::RestConfig c;
  c.scheme = "https";
  c.host = host;
  c.port = "6443";
  c.tls_server_name = tls_server_name;
  c.token = "t";
  c.source = "test";
  return c;
}

}  // namespace

TEST_CASE("an unusable tls-server-name is a start-up error, not an unchecked name", "[tls]") {
  // OpenSSL cannot verify a scoped IPv6 address; ignoring that failure would accept any
  // certificate the CA signed.
  CHECK_THROWS_WITH(kube::make_tls_context(https_config("10.0.0.1", "fe80::1%eth0")),
                    Catch::Contains("tls-server-name \"fe80::1%eth0\" cannot be verified as an IP "
                                    "address") &&
                        Catch::Contains("(test)"));
  CHECK_THROWS_AS(kube::make_tls_context(https_config("10.0.0.1", std::string("a\0b", 3))),
                  kube::ConfigError);
  CHECK_NOTHROW(kube::make_tls_context(https_config("10.0.0.1", "api.example.com")));
  CHECK_NOTHROW(kube::make_tls_context(https_config("10.0.0.1", "")));
  CHECK_NOTHROW(kube::make_tls_context(https_config("::1", "")));
}

TEST_CASE("the peer identity is set as a name with SNI, or as an IP without", "[tls]") {
  auto ctx = kube::make_tls_context(https_config("127.0.0.1", ""));
  std::unique_ptr<SSL, decltype(&SSL_free)> name_ssl(SSL_new(ctx->native_handle()), &SSL_free);
  REQUIRE(kube::set_peer_identity(name_ssl.get(), "api.example.com").empty());
  CHECK(std::string(SSL_get_servername(name_ssl.get(), TLSEXT_NAMETYPE_host_name)) ==
        "api.example.com");
  CHECK(std::string(X509_VERIFY_PARAM_get0_host(SSL_get0_param(name_ssl.get()), 0)) ==
        "api.example.com");

  std::unique_ptr<SSL, decltype(&SSL_free)> ip_ssl(SSL_new(ctx->native_handle()), &SSL_free);
  REQUIRE(kube::set_peer_identity(ip_ssl.get(), "127.0.0.1").empty());
  CHECK(SSL_get_servername(ip_ssl.get(), TLSEXT_NAMETYPE_host_name) == nullptr);
  CHECK(X509_VERIFY_PARAM_get0_host(SSL_get0_param(ip_ssl.get()), 0) == nullptr);

  std::unique_ptr<SSL, decltype(&SSL_free)> bad(SSL_new(ctx->native_handle()), &SSL_free);
  CHECK_FALSE(kube::set_peer_identity(bad.get(), "fe80::1%eth0").empty());
  CHECK_FALSE(kube::set_peer_identity(bad.get(), "").empty());
}
